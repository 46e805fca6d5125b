#include "net/listener_probe.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

namespace strata::net {
namespace {

// Closes a socket descriptor when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// The outcome of a connect() whose result is `err` (0: connected).
ListenerState FromConnectError(int err) {
  if (err == 0) return ListenerState::kAccepting;
  if (err == ECONNREFUSED) return ListenerState::kRefused;
  return ListenerState::kNoAnswer;
}

ListenerState ProbeAddress(const addrinfo& ai, std::chrono::milliseconds timeout) {
  Socket s(::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol));
  if (s.fd() < 0) return ListenerState::kNoAnswer;
  if (::connect(s.fd(), ai.ai_addr, ai.ai_addrlen) == 0) return ListenerState::kAccepting;
  if (errno != EINPROGRESS) return FromConnectError(errno);
  pollfd pfd{s.fd(), POLLOUT, 0};
  int ready;
  do {
    ready = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) return ListenerState::kNoAnswer;
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return ListenerState::kNoAnswer;
  return FromConnectError(err);
}

}  // namespace

const char* ToString(ListenerState state) {
  switch (state) {
    case ListenerState::kAccepting:
      return "accepting";
    case ListenerState::kRefused:
      return "refused";
    case ListenerState::kNoAnswer:
      return "no answer";
  }
  return "?";
}

ListenerState ProbeListener(const std::string& host, uint16_t port,
                            std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) {
    return ListenerState::kNoAnswer;
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, &::freeaddrinfo);
  // Refused only when every address refuses: a name may resolve to an
  // address family the broker does not listen on.
  bool all_refused = true;
  for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    ListenerState state = ProbeAddress(*ai, timeout);
    if (state == ListenerState::kAccepting) return state;
    if (state != ListenerState::kRefused) all_refused = false;
  }
  return all_refused ? ListenerState::kRefused : ListenerState::kNoAnswer;
}

}  // namespace strata::net
