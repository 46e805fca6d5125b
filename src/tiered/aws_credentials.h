#pragma once
// AwsCredentialSource: the access key an S3 store signs with, found where AWS tools look for it:
// the broker's own settings first, then the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN environment variables, then the shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials) under the profile AWS_PROFILE names
// ("default" when unset). A credentials file is read again when it changes, so rotated session
// tokens are picked up without a restart. Thread-safe.
#include <chrono>
#include <mutex>
#include <string>

#include "base/result.h"

namespace strata::tiered {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty unless temporary credentials
  std::string source;         // where they came from, for logs ("environment", a file's path)
};

// Parses an AWS shared credentials file (INI: "[profile]" then "key = value" lines; '#' and ';'
// start comments). kNotFound when the profile or its keys are missing.
Result<AwsCredentials> ParseAwsCredentialsFile(std::string_view text, std::string_view profile);

class AwsCredentialSource {
 public:
  // Fixed credentials (from the broker's configuration); none = look in the environment.
  static AwsCredentialSource Fixed(AwsCredentials credentials);
  // The environment, then the shared credentials file, as of each call.
  static AwsCredentialSource FromEnvironment();

  AwsCredentialSource(const AwsCredentialSource& other);
  AwsCredentialSource& operator=(const AwsCredentialSource&) = delete;

  // kInvalidArgument naming every place looked at when none has a key.
  Result<AwsCredentials> Get() const;

 private:
  AwsCredentialSource() = default;
  Result<AwsCredentials> FromFile() const;

  bool fixed_ = false;
  AwsCredentials credentials_;
  mutable std::mutex mu_;  // guards the file cache below
  mutable std::string file_path_;
  mutable std::string file_stamp_;  // size and mtime the cached credentials were read at
  mutable std::chrono::steady_clock::time_point file_checked_{};
  mutable Result<AwsCredentials> file_credentials_ =
      MakeError(Errc::kNotFound, "credentials file not read yet");
};

}  // namespace strata::tiered
