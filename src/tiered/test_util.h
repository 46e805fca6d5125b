#pragma once
// Helpers shared by src/tiered tests: a scratch directory and deterministic test data.
#include <stdlib.h>

#include <filesystem>
#include <random>
#include <string>

#include "base/bytes.h"
#include "base/check.h"
#include "tiered/remote_storage.h"

namespace strata::tiered::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strata-tiered-XXXXXX").string();
    STRATA_CHECK(::mkdtemp(tmpl.data()) != nullptr, "mkdtemp {}", tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// n pseudo-random bytes, the same for the same seed.
inline Bytes RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    for (int k = 0; k < 8; ++k) out[i + k] = uint8_t(v >> (8 * k));
  }
  for (; i < n; ++i) out[i] = uint8_t(rng());
  return out;
}

inline Bytes ToBytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

// Passes every call to `inner`; tests override the calls they script.
class ForwardingStorage : public RemoteStorage {
 public:
  explicit ForwardingStorage(RemoteStorage* inner) : inner_(inner) {}
  using RemoteStorage::Delete;
  using RemoteStorage::Get;
  using RemoteStorage::List;
  using RemoteStorage::MkDirs;
  using RemoteStorage::Put;
  using RemoteStorage::Rename;
  using RemoteStorage::Stat;
  Status Put(std::string_view p, const PutSource& s, const CallOptions& o) override {
    return inner_->Put(p, s, o);
  }
  Result<Bytes> Get(std::string_view p, uint64_t off, uint64_t len, const CallOptions& o) override {
    return inner_->Get(p, off, len, o);
  }
  Result<ObjectInfo> Stat(std::string_view p, const CallOptions& o) override {
    return inner_->Stat(p, o);
  }
  Result<std::vector<ObjectInfo>> List(std::string_view d, const CallOptions& o) override {
    return inner_->List(d, o);
  }
  Status Delete(std::string_view p, bool r, const CallOptions& o) override {
    return inner_->Delete(p, r, o);
  }
  Status MkDirs(std::string_view p, const CallOptions& o) override { return inner_->MkDirs(p, o); }
  Status Rename(std::string_view s, std::string_view d, const CallOptions& o) override {
    return inner_->Rename(s, d, o);
  }

 protected:
  RemoteStorage* inner_;
};

}  // namespace strata::tiered::testing
