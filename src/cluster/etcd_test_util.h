#pragma once
// EtcdCluster: real etcd processes (Debian's etcd-server) for unit tests, on
// ephemeral loopback ports with data in a temporary directory. Members can be
// stopped, killed and restarted to test failover and resumption. Tests only.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/etcd_kv_store.h"

namespace strata::cluster::testing {

// A free TCP port on 127.0.0.1 (the kernel's pick; released before use).
inline int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class EtcdCluster {
 public:
  // Starts `members` etcd processes forming one cluster and waits until it
  // answers (throws with the members' logs if it does not in time).
  // `extra_flags` go to every member (e.g. --quota-backend-bytes).
  // A port picked free can be taken (by any process's outgoing connection)
  // before etcd binds it: then the whole cluster starts again on new ports.
  explicit EtcdCluster(int members = 1, std::vector<std::string> extra_flags = {})
      : extra_flags_(std::move(extra_flags)) {
    static int seq = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-etcd-" + std::to_string(::getpid()) + "-" + std::to_string(seq++));
    for (int attempt = 0;; ++attempt) {
      Launch(members);
      try {
        WaitHealthy();
        return;
      } catch (const PortTaken&) {
        if (attempt == 2) throw;
        for (int i = 0; i < members; ++i) Stop(i);
      }
    }
  }

  ~EtcdCluster() {
    for (size_t i = 0; i < members_.size(); ++i) Stop(static_cast<int>(i));
    std::filesystem::remove_all(dir_);
  }

  std::vector<std::string> endpoints() const {
    std::vector<std::string> out;
    for (const Member& m : members_)
      out.push_back(endpoint(static_cast<int>(&m - members_.data())));
    return out;
  }
  std::string endpoint(int i) const {
    return "127.0.0.1:" + std::to_string(members_[i].client_port);
  }
  std::string endpoint_list() const {
    std::string s;
    for (const auto& e : endpoints()) s += (s.empty() ? "" : ",") + e;
    return s;
  }

  void Start(int i) {
    Member& m = members_[i];
    std::string data = (dir_ / m.name).string();
    std::string log = (dir_ / (m.name + ".log")).string();
    std::string client = "http://127.0.0.1:" + std::to_string(m.client_port);
    std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
    std::vector<std::string> args = {
        "etcd", "--name", m.name, "--data-dir", data, "--listen-client-urls", client,
        "--advertise-client-urls", client, "--listen-peer-urls", peer,
        "--initial-advertise-peer-urls", peer, "--initial-cluster", initial_cluster_,
        "--initial-cluster-state", "new", "--initial-cluster-token", dir_.filename().string(),
        // Short elections so failover tests run in seconds.
        "--heartbeat-interval", "50", "--election-timeout", "500", "--log-level", "warn"};
    args.insert(args.end(), extra_flags_.begin(), extra_flags_.end());
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("etcd", argv.data());
      ::_exit(127);
    }
    m.pid = pid;
  }

  // SIGTERM (clean) or SIGKILL, then reap.
  void Stop(int i, bool kill = false) {
    Member& m = members_[i];
    if (m.pid <= 0) return;
    ::kill(m.pid, kill ? SIGKILL : SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int status = 0;
    while (::waitpid(m.pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(m.pid, SIGKILL);
        ::waitpid(m.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    m.pid = -1;
  }

  // A member exited because its port was taken meanwhile.
  struct PortTaken : std::runtime_error {
    using std::runtime_error::runtime_error;
  };

  // Waits until a write through every live member's endpoint succeeds.
  void WaitHealthy(std::chrono::seconds timeout = std::chrono::seconds(30)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string last;
    while (std::chrono::steady_clock::now() < deadline) {
      if (LostItsPort()) throw PortTaken("an etcd member's port was taken\n" + Logs());
      bool all = true;
      for (size_t i = 0; i < members_.size() && all; ++i) {
        if (members_[i].pid <= 0) continue;
        auto store =
            OpenEtcdKvStore({{endpoint(static_cast<int>(i))}, std::chrono::milliseconds(1000)});
        KvOp op = KvOp::Put("/health", "ok");
        auto r = (*store)->Txn({}, std::span<const KvOp>(&op, 1));
        if (!r.ok()) {
          all = false;
          last = r.error().message;
        }
      }
      if (all) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw std::runtime_error("etcd did not become healthy: " + last + "\n" + Logs());
  }

  std::string Logs() const {
    std::string out;
    for (const Member& m : members_) {
      std::ifstream in(dir_ / (m.name + ".log"));
      std::stringstream ss;
      ss << in.rdbuf();
      out += "--- " + m.name + " ---\n" + ss.str();
    }
    return out;
  }

 private:
  // Fresh ports, a fresh data directory, and every member started.
  void Launch(int members) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    members_.clear();
    std::string initial;
    for (int i = 0; i < members; ++i) {
      Member m;
      m.name = "m" + std::to_string(i);
      m.client_port = FreePort();
      m.peer_port = FreePort();
      initial += (i ? "," : "") + m.name + "=http://127.0.0.1:" + std::to_string(m.peer_port);
      members_.push_back(m);
    }
    initial_cluster_ = initial;
    for (int i = 0; i < members; ++i) Start(i);
  }

  // Whether a member has exited, saying its address was in use.
  bool LostItsPort() {
    for (Member& m : members_) {
      int status = 0;
      if (m.pid <= 0 || ::waitpid(m.pid, &status, WNOHANG) != m.pid) continue;
      m.pid = -1;
      std::ifstream in(dir_ / (m.name + ".log"));
      std::stringstream ss;
      ss << in.rdbuf();
      if (ss.str().find("address already in use") != std::string::npos) return true;
    }
    return false;
  }

  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    pid_t pid = -1;
  };
  std::filesystem::path dir_;
  std::string initial_cluster_;
  std::vector<std::string> extra_flags_;
  std::vector<Member> members_;
};

}  // namespace strata::cluster::testing
