#include "tiered/aws_credentials.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace strata::tiered {
namespace {

// How often the credentials file is looked at again for a change.
constexpr std::chrono::seconds kFileRecheck{5};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string EnvVar(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string CredentialsFilePath() {
  std::string path = EnvVar("AWS_SHARED_CREDENTIALS_FILE");
  if (!path.empty()) return path;
  const std::string home = EnvVar("HOME");
  return home.empty() ? std::string() : home + "/.aws/credentials";
}

std::string Profile() {
  std::string profile = EnvVar("AWS_PROFILE");
  return profile.empty() ? "default" : profile;
}

// Size and modification time: a rewritten file gets a new stamp.
std::string FileStamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return fmt::format("{}:{}.{}", st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

}  // namespace

Result<AwsCredentials> ParseAwsCredentialsFile(std::string_view text, std::string_view profile) {
  AwsCredentials found;
  bool in_profile = false;
  bool profile_seen = false;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = Trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      in_profile = Trim(line.substr(1, line.size() - 2)) == profile;
      profile_seen = profile_seen || in_profile;
      continue;
    }
    const size_t eq = line.find('=');
    if (!in_profile || eq == std::string_view::npos) continue;
    const std::string_view key = Trim(line.substr(0, eq));
    const std::string value(Trim(line.substr(eq + 1)));
    if (key == "aws_access_key_id") found.access_key_id = value;
    if (key == "aws_secret_access_key") found.secret_access_key = value;
    if (key == "aws_session_token") found.session_token = value;
  }
  if (!profile_seen) {
    return MakeError(Errc::kNotFound, fmt::format("no profile [{}]", profile));
  }
  if (found.access_key_id.empty() || found.secret_access_key.empty()) {
    return MakeError(
        Errc::kNotFound,
        fmt::format("profile [{}] lacks aws_access_key_id or aws_secret_access_key", profile));
  }
  return found;
}

AwsCredentialSource AwsCredentialSource::Fixed(AwsCredentials credentials) {
  AwsCredentialSource source;
  source.fixed_ = true;
  source.credentials_ = std::move(credentials);
  return source;
}

AwsCredentialSource AwsCredentialSource::FromEnvironment() { return AwsCredentialSource(); }

AwsCredentialSource::AwsCredentialSource(const AwsCredentialSource& other)
    : fixed_(other.fixed_), credentials_(other.credentials_) {}

Result<AwsCredentials> AwsCredentialSource::Get() const {
  if (fixed_) return credentials_;
  AwsCredentials env;
  env.access_key_id = EnvVar("AWS_ACCESS_KEY_ID");
  env.secret_access_key = EnvVar("AWS_SECRET_ACCESS_KEY");
  env.session_token = EnvVar("AWS_SESSION_TOKEN");
  env.source = "environment";
  if (!env.access_key_id.empty() && !env.secret_access_key.empty()) return env;
  auto from_file = FromFile();
  if (from_file.ok()) return from_file;
  return MakeError(Errc::kInvalidArgument,
                   fmt::format("no S3 credentials: strata.remote.s3.access.key.id is not set, "
                               "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY are not in the "
                               "environment, and {}",
                               from_file.error().message));
}

Result<AwsCredentials> AwsCredentialSource::FromFile() const {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  const std::string path = CredentialsFilePath();
  if (path == file_path_ && now - file_checked_ < kFileRecheck) return file_credentials_;
  file_checked_ = now;
  const std::string stamp = FileStamp(path);
  if (path == file_path_ && stamp == file_stamp_ && !stamp.empty()) return file_credentials_;
  file_path_ = path;
  file_stamp_ = stamp;
  std::ifstream in(path);
  if (path.empty() || !in) {
    file_credentials_ = MakeError(
        Errc::kNotFound, fmt::format("the credentials file {} cannot be read",
                                     path.empty() ? "(no HOME for ~/.aws/credentials)" : path));
    return file_credentials_;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseAwsCredentialsFile(text.str(), Profile());
  if (parsed.ok()) {
    parsed->source = path;
    file_credentials_ = std::move(parsed);
  } else {
    file_credentials_ = MakeError(
        Errc::kNotFound, fmt::format("the credentials file {}: {}", path, parsed.error().message));
  }
  return file_credentials_;
}

}  // namespace strata::tiered
