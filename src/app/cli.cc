#include "app/cli.h"

#include <curl/curl.h>

#include <algorithm>
#include <iostream>

#include "app/command_config.h"

namespace strata::app {

void AddCommonOptions(CLI::App* sub, CommonFlags& flags, bool bootstrap, bool admin) {
  if (bootstrap) {
    sub->add_option("--bootstrap-server,--bootstrap,-b", flags.bootstrap,
                    "a broker's Kafka listener host:port,... (as Kafka's tools spell it)")
        ->capture_default_str();
  }
  if (admin) {
    sub->add_option("--admin", flags.admin, "a broker's admin listener host:port")
        ->capture_default_str();
  }
  sub->add_option_function<std::string>(
      "--command-config",
      [&flags](const std::string& path) {
        flags.command_config = path;
        SetCommandConfigPath(path);
      },
      "client properties: security.protocol, sasl.*, ssl.* (as Kafka's tools), "
      "strata.admin.token");
  sub->add_option("--format", flags.format, "human or json")
      ->check(CLI::IsMember({"human", "json"}))
      ->capture_default_str();
  sub->add_option("--timeout-ms", flags.timeout_ms, "per request")->check(CLI::Range(1, 3600000));
}

std::unique_ptr<KafkaAdmin> ConnectOrFail(const CommonFlags& flags, int* exit_code) {
  auto settings = LoadCommandConfig(flags.command_config);
  if (!settings.ok()) {
    *exit_code = Fail(settings.error().message, kExitRefused);
    return nullptr;
  }
  auto admin = KafkaAdmin::Connect(flags.bootstrap, flags.timeout(), settings->kafka);
  if (!admin.ok()) {
    *exit_code =
        Fail("cannot reach " + flags.bootstrap + ": " + admin.error().message, kExitUnreachable);
    return nullptr;
  }
  return std::move(*admin);
}

int Fail(const std::string& what, int code) {
  std::cerr << "strata: " << what << "\n";
  return code;
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width;
  for (const auto& row : rows_) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

std::string JoinIds(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

namespace {
size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}
}  // namespace

HttpAnswer AdminHttp(const std::string& method, const std::string& admin, const std::string& path) {
  HttpAnswer a;
  auto settings = CurrentCommandConfig();
  if (!settings.ok()) return {0, settings.error().message};
  // A bare host:port is https:// once a token or CA is configured: a token
  // never crosses the network in clear.
  const bool secure = !settings->admin_token.empty() || !settings->ca_file.empty();
  const std::string url =
      (admin.find("://") != std::string::npos ? admin
                                              : (secure ? "https://" : "http://") + admin) +
      path;
  if (url.rfind("http://", 0) == 0 && !settings->admin_token.empty()) {
    return {0, "refusing to send the admin token over http:// (use https://" +
                   url.substr(7, url.find('/', 7) - 7) + ")"};
  }
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return {0, "curl_easy_init failed"};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  struct curl_slist* headers = nullptr;
  if (!settings->admin_token.empty()) {
    const std::string auth = "Authorization: Bearer " + settings->admin_token;
    headers = curl_slist_append(headers, auth.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
  if (!settings->ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, settings->ca_file.c_str());
  if (!settings->cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, settings->cert_file.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEY, settings->cert_file.c_str());
    if (!settings->key_password.empty()) {
      curl_easy_setopt(curl, CURLOPT_KEYPASSWD, settings->key_password.c_str());
    }
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
  if (method == "POST") curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.status);
  } else {
    a.status = 0;
    a.body = curl_easy_strerror(rc);
  }
  curl_easy_cleanup(curl);
  curl_slist_free_all(headers);
  return a;
}

}  // namespace strata::app
