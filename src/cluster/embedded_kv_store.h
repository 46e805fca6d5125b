#pragma once
// EmbeddedKvStore: KvStore for a broker that runs alone, with etcd's
// semantics (revisions, compare-and-set transactions, watches from a past
// revision, leases with TTL, compaction) in memory, made durable by a journal
// of committed transactions and an occasional snapshot in one directory:
//
//   kv.snapshot  every key (no leased ones) at one revision, replaced atomically
//   kv.journal   the transactions after it: [u32 length][u32 crc32][record]
//
// A transaction is journaled and synced before it is applied or answered, so
// an acknowledged write survives a crash; a torn journal tail (crash mid-write)
// is cut off at open. Leased keys are not journaled: a lease, like the process
// that held it, does not outlive a restart, so its keys are gone after one.
//
// Thread-safety: as KvStore. One worker thread expires leases and runs the
// watch callbacks, in revision order.
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "base/env.h"
#include "cluster/kv_store.h"

namespace strata::cluster {

struct EmbeddedKvOptions {
  // Revisions of history kept for watches and reads at a past revision.
  int64_t history_revisions = 10000;
  // The journal is folded into a new snapshot past this size.
  uint64_t journal_snapshot_bytes = 8 << 20;
};

class EmbeddedKvStore : public KvStore {
 public:
  static Result<std::unique_ptr<EmbeddedKvStore>> Open(const std::filesystem::path& dir,
                                                       Env* env = Env::Default(),
                                                       EmbeddedKvOptions options = {});
  ~EmbeddedKvStore() override;

  Result<RangeResult> Get(const std::string& key) override;
  Result<RangeResult> Range(const std::string& from, const std::string& end, Revision at,
                            int64_t limit) override;
  Result<TxnResult> Txn(std::span<const KvCompare> compares, std::span<const KvOp> ops) override;
  Result<LeaseId> GrantLease(std::chrono::milliseconds ttl) override;
  Result<std::chrono::milliseconds> KeepAliveOnce(LeaseId lease) override;
  Status RevokeLease(LeaseId lease) override;
  Result<std::unique_ptr<KvWatch>> Watch(const std::string& prefix, Revision start,
                                         WatchCallback callback) override;
  Status Compact(Revision rev) override;
  std::string Describe() const override { return "embedded " + dir_.string(); }
  // A quorum of one: this store, leading, at its current revision.
  Result<QuorumStatus> DescribeQuorum() override;

 private:
  class Handle;
  struct Watcher {
    std::string prefix;
    Revision next = 0;
    WatchCallback callback;
    bool cancelled = false;  // under dispatch_mu_
  };
  struct Lease {
    int64_t ttl_ms = 0;
    int64_t deadline_ms = 0;  // steady clock
    std::set<std::string> keys;
  };
  // One change in history, with what it replaced (for reads at a past revision).
  struct Change {
    WatchEvent event;
    std::optional<KeyValue> prev;
  };

  EmbeddedKvStore(std::filesystem::path dir, Env* env, EmbeddedKvOptions options);
  Status Load();
  Status ReplayJournal(const Bytes& journal);
  Status WriteSnapshotLocked();
  // Appends one record and syncs; on failure the journal is cut back to where
  // it was so that a later record does not follow a torn one.
  Status JournalLocked(Revision rev, std::span<const KvOp> ops);
  bool CompareHolds(const KvCompare& c) const;
  bool ChangesSomethingLocked(std::span<const KvOp> ops) const;
  Status ValidateTxn(std::span<const KvOp> ops) const;
  // Applies ops at revision `rev` (history, leases); `replay` skips history.
  void ApplyLocked(Revision rev, std::span<const KvOp> ops, bool replay);
  void PutLocked(Revision rev, const KvOp& op, bool replay);
  void EraseLocked(Revision rev, std::map<std::string, KeyValue>::iterator it, bool replay);
  void TrimHistoryLocked();
  void ExpireLeasesLocked(int64_t now_ms);
  void Run();
  void Unwatch(const std::shared_ptr<Watcher>& w);

  const std::filesystem::path dir_;
  Env* const env_;
  const EmbeddedKvOptions options_;

  mutable std::mutex mu_;
  std::map<std::string, KeyValue> data_;
  Revision revision_ = 0;
  Revision compact_revision_ = 0;  // history holds revisions >= this one
  std::deque<std::pair<Revision, Change>> history_;
  std::map<LeaseId, Lease> leases_;
  LeaseId next_lease_ = 1;
  std::set<std::shared_ptr<Watcher>> watchers_;
  std::unique_ptr<WritableFile> journal_;
  Status failed_;  // a journal that could not be repaired stops all writes
  bool stopping_ = false;
  std::condition_variable wake_;
  std::mutex dispatch_mu_;  // held while callbacks run; taken before mu_
  std::thread worker_;
};

}  // namespace strata::cluster
