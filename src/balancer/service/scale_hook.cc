#include "balancer/service/scale_hook.h"

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace strata::balancer {

namespace {

// The broker's environment with `extra` set over it.
std::vector<std::string> Environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string name(entry.substr(0, entry.find('=')));
    if (extra.count(name) == 0) out.emplace_back(entry);
  }
  for (const auto& [name, value] : extra) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Status RunScaleHook(const std::string& command, const std::map<std::string, std::string>& env,
                    std::chrono::milliseconds timeout) {
  std::vector<std::string> args = {"/bin/sh", "-c", command};
  std::vector<std::string> environment = Environment(env);
  std::vector<char*> argv = Pointers(args);
  std::vector<char*> envp = Pointers(environment);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv.data(), envp.data());
  if (rc != 0) {
    return MakeError(Errc::kIoError, fmt::format("starting /bin/sh: {}", std::strerror(rc)));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      return MakeError(Errc::kIoError,
                       fmt::format("waiting for the hook: {}", std::strerror(errno)));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return MakeError(Errc::kTimeout,
                       fmt::format("killed after {} ms (strata.balancer.scale.hook.timeout.ms)",
                                   timeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  if (WIFEXITED(status)) {
    return MakeError(Errc::kIoError, fmt::format("exited with {}", WEXITSTATUS(status)));
  }
  return MakeError(Errc::kIoError, fmt::format("ended by signal {}", WTERMSIG(status)));
}

}  // namespace strata::balancer
