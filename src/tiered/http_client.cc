#include "tiered/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace strata::tiered {
namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Per-request state the curl callbacks see.
struct Transfer {
  const HttpRequest* req;
  HttpResponse* resp;
  uint64_t sent = 0;
  int read_errno = 0;
};

size_t OnWrite(char* data, size_t size, size_t n, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  t->resp->body.insert(t->resp->body.end(), reinterpret_cast<uint8_t*>(data),
                       reinterpret_cast<uint8_t*>(data) + size * n);
  return size * n;
}

// Collects the headers of the final response: a new status line (after a
// 100 Continue or a redirect) starts over.
size_t OnHeader(char* data, size_t size, size_t n, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  std::string_view line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {
    t->resp->headers.clear();
    return size * n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  t->resp->headers.emplace_back(std::move(name), std::string(value));
  return size * n;
}

size_t OnRead(char* buf, size_t size, size_t n, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  const HttpRequest& r = *t->req;
  size_t want = size * n;
  if (r.body_fd < 0) {
    size_t len = std::min(want, r.body.size() - size_t(t->sent));
    std::memcpy(buf, r.body.data() + t->sent, len);
    t->sent += len;
    return len;
  }
  want = size_t(std::min<uint64_t>(want, r.body_size - t->sent));
  for (;;) {
    ssize_t got = ::pread(r.body_fd, buf, want, off_t(r.body_offset + t->sent));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      t->read_errno = errno;
      return CURL_READFUNC_ABORT;
    }
    t->sent += uint64_t(got);
    return size_t(got);
  }
}

int OnProgress(void* ud, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(ud);
  const CancelFlag& c = t->req->cancel;
  return c && c->load(std::memory_order_relaxed) ? 1 : 0;
}

Error CurlError(CURLcode rc, const HttpRequest& req, const char* detail, int read_errno) {
  Errc code = Errc::kIoError;
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      code = Errc::kUnavailable;
      break;
    case CURLE_OPERATION_TIMEDOUT:
      code = Errc::kTimeout;
      break;
    case CURLE_ABORTED_BY_CALLBACK:
      code = Errc::kShuttingDown;
      break;
    default:
      break;
  }
  std::string why = detail && *detail ? detail : curl_easy_strerror(rc);
  if (read_errno != 0) why += fmt::format(" (reading upload: {})", std::strerror(read_errno));
  if (code == Errc::kShuttingDown) why = "cancelled";
  return MakeError(code, fmt::format("HTTP {}: {}", req.url.substr(0, req.url.find('?')), why));
}

void SetMethod(CURL* h, const HttpRequest& req, Transfer* t) {
  switch (req.method) {
    case HttpRequest::Method::kGet:
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
      break;
    case HttpRequest::Method::kHead:
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
      break;
    case HttpRequest::Method::kDelete:
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
    case HttpRequest::Method::kPut: {
      uint64_t size = req.body_fd >= 0 ? req.body_size : req.body.size();
      curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);  // PUT with Content-Length (0 for no body)
      curl_easy_setopt(h, CURLOPT_READFUNCTION, OnRead);
      curl_easy_setopt(h, CURLOPT_READDATA, t);
      curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, curl_off_t(size));
      break;
    }
    case HttpRequest::Method::kPost: {
      uint64_t size = req.body_fd >= 0 ? req.body_size : req.body.size();
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      curl_easy_setopt(h, CURLOPT_READFUNCTION, OnRead);
      curl_easy_setopt(h, CURLOPT_READDATA, t);
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size));
      break;
    }
  }
}

// Headers of the request, signing ones included; the caller frees the list.
curl_slist* RequestHeaders(CURL* h, const HttpRequest& req, std::string& userpwd) {
  curl_slist* headers = nullptr;
  for (const std::string& header : req.headers)
    headers = curl_slist_append(headers, header.c_str());
  if (req.sign == nullptr) {
    return curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  }
  // libcurl 7.88 signs every header it is given, an emptied "Expect:" too, which it then does
  // not send: signed requests keep the 100-continue, without waiting for it.
  curl_easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
  const AwsSigV4& sign = *req.sign;
  const bool payload_hash_given =
      std::any_of(req.headers.begin(), req.headers.end(), [](const std::string& header) {
        return header.size() > 21 && strncasecmp(header.c_str(), "x-amz-content-sha256:", 21) == 0;
      });
  if (!payload_hash_given) {
    headers = curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  }
  if (!sign.session_token.empty()) {
    const std::string token = "x-amz-security-token: " + sign.session_token;
    headers = curl_slist_append(headers, token.c_str());
  }
  const std::string provider = fmt::format("aws:amz:{}:{}", sign.region, sign.service);
  curl_easy_setopt(h, CURLOPT_AWS_SIGV4, provider.c_str());  // copied by curl
  userpwd = sign.access_key_id + ":" + sign.secret_access_key;
  curl_easy_setopt(h, CURLOPT_USERPWD, userpwd.c_str());
  return headers;
}

}  // namespace

void HttpClient::HandleDeleter::operator()(void* h) const { curl_easy_cleanup(h); }

HttpClient::HttpClient(int max_idle_handles) : max_idle_(size_t(std::max(1, max_idle_handles))) {
  GlobalInitOnce();
}

HttpClient::~HttpClient() = default;

HttpClient::Handle HttpClient::Acquire() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      Handle h = std::move(idle_.back());
      idle_.pop_back();
      curl_easy_reset(h.get());
      return h;
    }
  }
  return Handle(curl_easy_init());
}

void HttpClient::Release(Handle h) {
  std::lock_guard lock(mu_);
  if (idle_.size() < max_idle_) idle_.push_back(std::move(h));
}

Result<HttpResponse> HttpClient::Perform(const HttpRequest& req) {
  if (req.timeout.count() <= 0) {
    return MakeError(Errc::kTimeout, fmt::format("HTTP {}: deadline passed", req.url));
  }
  Handle handle = Acquire();
  if (!handle) return MakeError(Errc::kIoError, "curl_easy_init failed");
  CURL* h = handle.get();
  HttpResponse resp;
  resp.body.reserve(req.size_hint);
  Transfer t{&req, &resp};
  char errbuf[CURL_ERROR_SIZE] = {0};
  std::string userpwd;
  curl_slist* headers = RequestHeaders(h, req, userpwd);

  curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, long(req.timeout.count()));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   long(std::min(req.timeout, req.connect_timeout).count()));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  if (req.stall_timeout.count() > 0) {
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
                     long(std::max<int64_t>(1, req.stall_timeout.count() / 1000)));
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  SetMethod(h, req, &t);

  CURLcode rc = curl_easy_perform(h);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    Error err = CurlError(rc, req, errbuf, t.read_errno);
    return err;  // a handle that failed mid-transfer is dropped, not pooled
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
  char* loc = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc) resp.location = loc;
  Release(std::move(handle));
  return resp;
}

CallDeadline CallDeadline::From(const CallOptions& opts,
                                std::chrono::milliseconds default_timeout) {
  const auto timeout = opts.timeout.count() > 0 ? opts.timeout : default_timeout;
  return CallDeadline{std::chrono::steady_clock::now() + timeout, opts.cancel};
}

CallDeadline CallDeadline::In(std::chrono::milliseconds timeout) {
  return CallDeadline{std::chrono::steady_clock::now() + timeout, nullptr};
}

std::chrono::milliseconds CallDeadline::Remaining() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                               std::chrono::steady_clock::now());
}

Result<HttpResponse> PerformWithin(HttpClient& http, const CallDeadline& call, HttpRequest req,
                                   std::chrono::milliseconds connect_timeout,
                                   std::chrono::milliseconds stall_timeout, std::string_view what) {
  if (call.cancel && call.cancel->load()) {
    return MakeError(Errc::kShuttingDown, fmt::format("{}: cancelled", what));
  }
  req.timeout = call.Remaining();
  req.connect_timeout = connect_timeout;
  req.stall_timeout = stall_timeout;
  req.cancel = call.cancel;
  auto resp = http.Perform(req);
  if (!resp.ok()) {
    Error e = resp.take_error();
    return MakeError(e.code, fmt::format("{}: {}", what, e.message));
  }
  return resp;
}

std::string_view HttpResponse::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return {};
}

std::string UrlEncode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    bool plain =
        std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
    if (plain) {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace strata::tiered
