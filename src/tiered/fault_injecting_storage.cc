#include "tiered/fault_injecting_storage.h"

#include <fmt/format.h>

#include <thread>

namespace strata::tiered {

const char* StorageOpName(StorageOp op) {
  static constexpr const char* kNames[kStorageOpCount] = {"put",    "get",    "stat",  "list",
                                                          "delete", "mkdirs", "rename"};
  return kNames[size_t(op)];
}

bool SleepUnlessCancelled(std::chrono::milliseconds d, const CancelFlag& cancel) {
  auto end = std::chrono::steady_clock::now() + d;
  for (;;) {
    if (cancel && cancel->load()) return false;
    auto left = end - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(5)));
  }
}

FaultInjectingStorage::FaultInjectingStorage(std::unique_ptr<RemoteStorage> inner, uint64_t seed)
    : inner_(std::move(inner)), rng_(seed) {}

void FaultInjectingStorage::SetFault(StorageOp op, const FaultSpec& spec) {
  std::lock_guard lock(mu_);
  faults_[size_t(op)] = spec;
}

void FaultInjectingStorage::SetAllFaults(const FaultSpec& spec) {
  std::lock_guard lock(mu_);
  faults_.fill(spec);
}

FaultCounters FaultInjectingStorage::counters() const {
  return FaultCounters{calls_.load(), failures_.load(), delays_.load()};
}

FaultInjectingStorage::Decision FaultInjectingStorage::Decide(StorageOp op) {
  std::lock_guard lock(mu_);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Decision d;
  d.spec = faults_[size_t(op)];
  // Always draw both numbers so one op's settings do not shift another's sequence.
  double f = u(rng_);
  double w = u(rng_);
  d.fail = f < d.spec.fail_ratio;
  d.delay = w < d.spec.delay_ratio && d.spec.delay.count() > 0;
  return d;
}

template <typename Fn>
auto FaultInjectingStorage::Run(StorageOp op, const CallOptions& opts, Fn&& fn) -> decltype(fn()) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  Decision d = Decide(op);
  if (d.delay) {
    delays_.fetch_add(1, std::memory_order_relaxed);
    if (!SleepUnlessCancelled(d.spec.delay, opts.cancel)) {
      return MakeError(Errc::kShuttingDown,
                       fmt::format("{}: cancelled (injected delay)", StorageOpName(op)));
    }
  }
  if (!d.fail) return fn();
  failures_.fetch_add(1, std::memory_order_relaxed);
  if (d.spec.fail_after_call) (void)fn();
  return MakeError(d.spec.fail_code,
                   fmt::format("{}: injected fault{}", StorageOpName(op),
                               d.spec.fail_after_call ? " (after the call)" : ""));
}

Status FaultInjectingStorage::Put(std::string_view path, const PutSource& src,
                                  const CallOptions& opts) {
  return Run(StorageOp::kPut, opts, [&] { return inner_->Put(path, src, opts); });
}

Result<Bytes> FaultInjectingStorage::Get(std::string_view path, uint64_t offset, uint64_t length,
                                         const CallOptions& opts) {
  return Run(StorageOp::kGet, opts, [&] { return inner_->Get(path, offset, length, opts); });
}

Result<ObjectInfo> FaultInjectingStorage::Stat(std::string_view path, const CallOptions& opts) {
  return Run(StorageOp::kStat, opts, [&] { return inner_->Stat(path, opts); });
}

Result<std::vector<ObjectInfo>> FaultInjectingStorage::List(std::string_view dir,
                                                            const CallOptions& opts) {
  return Run(StorageOp::kList, opts, [&] { return inner_->List(dir, opts); });
}

Status FaultInjectingStorage::Delete(std::string_view path, bool recursive,
                                     const CallOptions& opts) {
  return Run(StorageOp::kDelete, opts, [&] { return inner_->Delete(path, recursive, opts); });
}

Status FaultInjectingStorage::MkDirs(std::string_view path, const CallOptions& opts) {
  return Run(StorageOp::kMkDirs, opts, [&] { return inner_->MkDirs(path, opts); });
}

Status FaultInjectingStorage::Rename(std::string_view src, std::string_view dst,
                                     const CallOptions& opts) {
  return Run(StorageOp::kRename, opts, [&] { return inner_->Rename(src, dst, opts); });
}

}  // namespace strata::tiered
