#pragma once
// Shared pieces of the cluster tests: bounded waits, and the store a
// backend-parameterised test runs on (the embedded store in a temporary
// directory, or a real etcd process). Tests only.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "cluster/embedded_kv_store.h"
#include "cluster/etcd_test_util.h"

namespace strata::cluster::testing {

// Waits until `pred` holds; false if it does not within `timeout`.
template <typename P>
bool Eventually(P pred, std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A KvStore for one test: "embedded" or "etcd" (one etcd member of its own).
class TestBackend {
 public:
  TestBackend(const std::string& kind, const std::string& tag) {
    static int seq = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(seq++));
    std::filesystem::remove_all(dir_);
    if (kind == "etcd") {
      etcd_ = std::make_unique<EtcdCluster>(1);
      kv_ = OpenEtcdKvStore({etcd_->endpoints(), std::chrono::milliseconds(2000)}).value();
    } else {
      kv_ = EmbeddedKvStore::Open(dir_).value();
    }
  }
  ~TestBackend() {
    kv_.reset();
    etcd_.reset();
    std::filesystem::remove_all(dir_);
  }
  KvStore& kv() { return *kv_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<EtcdCluster> etcd_;
  std::unique_ptr<KvStore> kv_;
};

}  // namespace strata::cluster::testing
