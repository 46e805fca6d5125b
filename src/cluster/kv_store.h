#pragma once
// KvStore: the revisioned key-value store under cluster metadata, with etcd's
// v3 semantics. Every committed write bumps one store-wide revision; each key
// carries the revision that created it and the one that last modified it;
// writes are transactions guarded by compares (compare-and-set on
// mod_revision); watches stream every change after a revision, in order;
// leases bind keys to a session that expires unless kept alive.
//
// Two backends implement it: etcd itself (clusters) and an embedded,
// journaled store (a single broker needs no etcd). Everything above this
// interface (metadata view, broker registry, controller) runs unchanged on
// either, so the single-node path is the cluster path.
//
// Thread-safety: every method is safe to call from any thread. Watch
// callbacks run on a thread of the store's and must not block for long.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace strata::cluster {

// A store-wide revision (etcd's header.revision). 0 = "none" / "latest".
using Revision = int64_t;
// A lease (etcd's lease ID). 0 = no lease.
using LeaseId = int64_t;

struct KeyValue {
  std::string key;
  std::string value;
  Revision create_revision = 0;
  Revision mod_revision = 0;
  int64_t version = 0;  // writes since creation
  LeaseId lease = 0;
};

// One guard of a transaction; the transaction applies only if all hold.
struct KvCompare {
  enum class Target { kModRevision, kCreateRevision, kVersion, kValue };
  enum class Op { kEqual, kNotEqual, kLess, kGreater };
  std::string key;
  Target target = Target::kModRevision;
  Op op = Op::kEqual;
  int64_t number = 0;  // for the revision and version targets
  std::string value;   // for kValue

  // The key's mod_revision equals `rev` (0 = the key is absent).
  static KvCompare ModRevisionIs(std::string key, Revision rev);
  static KvCompare Absent(std::string key);
  static KvCompare Exists(std::string key);
  // The key was created at `rev` (fences writes by an election's holder).
  static KvCompare CreatedAt(std::string key, Revision rev);
};

// One write of a transaction.
struct KvOp {
  enum class Kind { kPut, kDelete, kDeletePrefix };
  Kind kind = Kind::kPut;
  std::string key;  // the prefix for kDeletePrefix
  std::string value;
  LeaseId lease = 0;

  static KvOp Put(std::string key, std::string value, LeaseId lease = 0);
  static KvOp Delete(std::string key);
  static KvOp DeletePrefix(std::string prefix);
  // Bytes this op adds to a request (for etcd's request size limit).
  size_t WireSize() const { return key.size() + value.size() + 16; }
};

struct TxnResult {
  bool succeeded = false;  // false: a compare failed and nothing was written
  Revision revision = 0;   // the store's revision after the transaction
};

struct RangeResult {
  std::vector<KeyValue> kvs;  // in key order
  Revision revision = 0;      // the store revision the read saw
  bool more = false;          // `limit` cut the result
};

struct WatchEvent {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  KeyValue kv;  // for kDelete: key and mod_revision (the deletion's revision)
};

// What a watch delivers: the events of one or more revisions, in order, or
// news that history up to compact_revision is gone (the watch has ended: the
// owner re-reads with a Range and watches again from range.revision + 1).
struct WatchBatch {
  std::vector<WatchEvent> events;
  Revision revision = 0;          // the store revision this batch brings the watcher to
  Revision compact_revision = 0;  // non-zero: compacted, the watch is over
};

using WatchCallback = std::function<void(const WatchBatch&)>;

// The first key after every key with `prefix` (etcd's range_end for a prefix).
std::string PrefixEnd(const std::string& prefix);

// A running watch; destroying it stops delivery (no callback runs after the
// destructor returns).
// One member of the store's quorum: an etcd member, or the embedded store
// itself (a quorum of one).
struct QuorumMember {
  uint64_t id = 0;
  std::string name;
  std::string endpoint;     // its client address
  bool reachable = false;   // answered a status request just now
  int64_t raft_index = -1;  // its last log entry (-1: unreachable)
  int64_t applied_index = -1;
};
struct QuorumStatus {
  std::vector<QuorumMember> members;  // in id order
  uint64_t leader_id = 0;             // 0: no leader known
  int64_t term = 0;                   // raft term (Kafka's leader epoch)
  int64_t commit_index = -1;          // the leader's raft index (Kafka's high watermark)
};

class KvWatch {
 public:
  virtual ~KvWatch() = default;
};

class KvStore {
 public:
  virtual ~KvStore() = default;

  // The key, or an empty result.
  virtual Result<RangeResult> Get(const std::string& key) = 0;
  // Keys in [from, end) at revision `at` (0 = now), at most `limit` (0 = all).
  virtual Result<RangeResult> Range(const std::string& from, const std::string& end, Revision at,
                                    int64_t limit) = 0;
  // Every key starting with `prefix`.
  Result<RangeResult> GetPrefix(const std::string& prefix, Revision at = 0, int64_t limit = 0) {
    return Range(prefix, PrefixEnd(prefix), at, limit);
  }
  // Applies `ops` atomically if every compare holds. At most kMaxTxnOps ops
  // and compares each and kMaxRequestBytes in all (etcd's limits; see
  // WriteInBatches for more).
  virtual Result<TxnResult> Txn(std::span<const KvCompare> compares, std::span<const KvOp> ops) = 0;

  virtual Result<LeaseId> GrantLease(std::chrono::milliseconds ttl) = 0;
  // Renews the lease; returns its remaining TTL. kNotFound when it expired.
  virtual Result<std::chrono::milliseconds> KeepAliveOnce(LeaseId lease) = 0;
  virtual Status RevokeLease(LeaseId lease) = 0;

  // Streams every change under `prefix` from revision `start` on. A dropped
  // connection is resumed from the last delivered revision + 1; compaction
  // past that point ends the watch with a compacted batch.
  virtual Result<std::unique_ptr<KvWatch>> Watch(const std::string& prefix, Revision start,
                                                 WatchCallback callback) = 0;
  // Discards history before `rev`.
  virtual Status Compact(Revision rev) = 0;

  // What the store is (for logs): "etcd 127.0.0.1:2379" or "embedded <dir>".
  virtual std::string Describe() const = 0;

  // The health of the store's replication quorum (DescribeQuorum shows it).
  virtual Result<QuorumStatus> DescribeQuorum() = 0;
};

// etcd's defaults for --max-txn-ops and --max-request-bytes.
inline constexpr size_t kMaxTxnOps = 128;
inline constexpr size_t kMaxRequestBytes = 1536 * 1024;

// Applies `ops` in as few transactions as etcd's limits allow, each guarded by
// `guards` (e.g. the controller's fence). Not atomic as a whole: the ops must
// be safe to apply in part (each a CAS or an idempotent put). Returns the
// revision after the last transaction; kConflict-style failure (a guard that
// no longer holds) comes back as succeeded = false with the ops applied so far.
Result<TxnResult> WriteInBatches(KvStore& store, std::span<const KvCompare> guards,
                                 std::span<const KvOp> ops);

}  // namespace strata::cluster
