#include "cluster/embedded_kv_store.h"

#include <zlib.h>

#include <algorithm>
#include <chrono>

#include "base/log.h"
#include "cluster/logger.h"

namespace strata::cluster {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr const char* kSnapshotFile = "kv.snapshot";
constexpr const char* kJournalFile = "kv.journal";
constexpr uint32_t kSnapshotMagic = 0x53544b56;  // "STKV"

int64_t SteadyMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint32_t Crc(ByteView data) {
  return static_cast<uint32_t>(::crc32(0, data.data(), static_cast<uInt>(data.size())));
}

// Big-endian writer and bounds-checked reader for the journal and snapshot.
struct Writer {
  Bytes out;
  void U8(uint8_t v) { out.push_back(v); }
  void U32(uint32_t v) {
    size_t n = out.size();
    out.resize(n + 4);
    StoreBE32(out.data() + n, v);
  }
  void I64(int64_t v) {
    size_t n = out.size();
    out.resize(n + 8);
    StoreBE64(out.data() + n, static_cast<uint64_t>(v));
  }
  void Str(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
};

struct Reader {
  ByteView in;
  size_t pos = 0;
  bool ok = true;
  bool Need(size_t n) {
    if (!ok || in.size() - pos < n) ok = false;
    return ok;
  }
  uint8_t U8() { return Need(1) ? in[pos++] : 0; }
  uint32_t U32() {
    if (!Need(4)) return 0;
    uint32_t v = LoadBE32(in.data() + pos);
    pos += 4;
    return v;
  }
  int64_t I64() {
    if (!Need(8)) return 0;
    auto v = static_cast<int64_t>(LoadBE64(in.data() + pos));
    pos += 8;
    return v;
  }
  std::string Str() {
    uint32_t n = U32();
    if (!Need(n)) return {};
    std::string s(reinterpret_cast<const char*>(in.data() + pos), n);
    pos += n;
    return s;
  }
};

bool HasPrefix(const std::string& key, const std::string& prefix) {
  return key.compare(0, prefix.size(), prefix) == 0;
}

template <typename T>
bool Holds(KvCompare::Op op, const T& actual, const T& expected) {
  switch (op) {
    case KvCompare::Op::kEqual:
      return actual == expected;
    case KvCompare::Op::kNotEqual:
      return actual != expected;
    case KvCompare::Op::kLess:
      return actual < expected;
    case KvCompare::Op::kGreater:
      return actual > expected;
  }
  return false;
}

}  // namespace

// The KvWatch handed to callers; unregisters its watcher on destruction.
class EmbeddedKvStore::Handle : public KvWatch {
 public:
  Handle(EmbeddedKvStore* store, std::shared_ptr<Watcher> w) : store_(store), w_(std::move(w)) {}
  ~Handle() override { store_->Unwatch(w_); }

 private:
  EmbeddedKvStore* store_;
  std::shared_ptr<Watcher> w_;
};

EmbeddedKvStore::EmbeddedKvStore(fs::path dir, Env* env, EmbeddedKvOptions options)
    : dir_(std::move(dir)), env_(env), options_(options) {}

Result<std::unique_ptr<EmbeddedKvStore>> EmbeddedKvStore::Open(const fs::path& dir, Env* env,
                                                               EmbeddedKvOptions options) {
  std::unique_ptr<EmbeddedKvStore> store(new EmbeddedKvStore(dir, env, options));
  STRATA_RETURN_IF_ERROR(store->Load());
  store->worker_ = std::thread([s = store.get()] { s->Run(); });
  return store;
}

EmbeddedKvStore::~EmbeddedKvStore() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

Status EmbeddedKvStore::Load() {
  STRATA_RETURN_IF_ERROR(env_->CreateDirs(dir_));
  auto snapshot = env_->ReadFile(dir_ / kSnapshotFile);
  if (snapshot.ok()) {
    Reader r{*snapshot};
    uint32_t magic = r.U32();
    uint32_t crc = r.U32();
    ByteView body = r.ok ? ByteView(*snapshot).subspan(8) : ByteView{};
    if (!r.ok || magic != kSnapshotMagic || Crc(body) != crc) {
      return MakeError(Errc::kCorrupt, "metadata snapshot " + (dir_ / kSnapshotFile).string() +
                                           " is damaged (bad magic or checksum)");
    }
    Reader b{body};
    revision_ = b.I64();
    compact_revision_ = revision_;
    uint32_t n = b.U32();
    for (uint32_t i = 0; i < n && b.ok; ++i) {
      KeyValue kv;
      kv.key = b.Str();
      kv.value = b.Str();
      kv.create_revision = b.I64();
      kv.mod_revision = b.I64();
      kv.version = b.I64();
      data_[kv.key] = std::move(kv);
    }
    if (!b.ok) return MakeError(Errc::kCorrupt, "metadata snapshot is truncated");
  } else if (snapshot.error().code != Errc::kNotFound) {
    return snapshot.take_error();
  }
  auto journal = env_->ReadFile(dir_ / kJournalFile);
  if (journal.ok()) {
    STRATA_RETURN_IF_ERROR(ReplayJournal(*journal));
  } else if (journal.error().code != Errc::kNotFound) {
    return journal.take_error();
  }
  compact_revision_ = revision_;
  STRATA_ASSIGN_OR_RETURN(journal_, env_->OpenAppendable(dir_ / kJournalFile));
  return Status::Ok();
}

Status EmbeddedKvStore::ReplayJournal(const Bytes& journal) {
  size_t pos = 0;
  while (pos < journal.size()) {
    Reader frame{ByteView(journal).subspan(pos)};
    uint32_t len = frame.U32();
    uint32_t crc = frame.U32();
    if (!frame.Need(len) || Crc(frame.in.subspan(8, len)) != crc) break;
    Reader r{frame.in.subspan(8, len)};
    Revision rev = r.I64();
    uint32_t n = r.U32();
    std::vector<KvOp> ops;
    for (uint32_t i = 0; i < n && r.ok; ++i) {
      KvOp op;
      op.kind = static_cast<KvOp::Kind>(r.U8());
      op.key = r.Str();
      op.value = r.Str();
      ops.push_back(std::move(op));
    }
    if (!r.ok) break;
    if (rev > revision_) {  // records up to the snapshot's revision are in it
      ApplyLocked(rev, ops, /*replay=*/true);
      revision_ = rev;
    }
    pos += 8 + len;
  }
  if (pos < journal.size()) {
    MetadataLog()->warn(
        "metadata journal {}: {} bytes after offset {} are torn or damaged; cut off",
        (dir_ / kJournalFile).string(), journal.size() - pos, pos);
    STRATA_RETURN_IF_ERROR(env_->Truncate(dir_ / kJournalFile, pos));
  }
  return Status::Ok();
}

Status EmbeddedKvStore::WriteSnapshotLocked() {
  Writer body;
  body.I64(revision_);
  uint32_t n = 0;
  for (const auto& [key, kv] : data_) n += kv.lease == 0;
  body.U32(n);
  for (const auto& [key, kv] : data_) {
    if (kv.lease != 0) continue;
    body.Str(kv.key);
    body.Str(kv.value);
    body.I64(kv.create_revision);
    body.I64(kv.mod_revision);
    body.I64(kv.version);
  }
  Writer file;
  file.U32(kSnapshotMagic);
  file.U32(Crc(body.out));
  file.out.insert(file.out.end(), body.out.begin(), body.out.end());
  STRATA_RETURN_IF_ERROR(env_->WriteFileAtomic(dir_ / kSnapshotFile, file.out));
  // Records up to revision_ are now in the snapshot; an empty journal can
  // replace the old one (a crash before this leaves records replay skips).
  STRATA_RETURN_IF_ERROR(env_->WriteFileAtomic(dir_ / kJournalFile, {}));
  STRATA_ASSIGN_OR_RETURN(journal_, env_->OpenAppendable(dir_ / kJournalFile));
  return Status::Ok();
}

Status EmbeddedKvStore::JournalLocked(Revision rev, std::span<const KvOp> ops) {
  Writer body;
  body.I64(rev);
  body.U32(static_cast<uint32_t>(ops.size()));
  for (const KvOp& op : ops) {
    // A leased put is journaled as a delete: after a restart the lease, and
    // so the key, is gone, and no older value may come back in its place.
    bool leased = op.kind == KvOp::Kind::kPut && op.lease != 0;
    body.U8(static_cast<uint8_t>(leased ? KvOp::Kind::kDelete : op.kind));
    body.Str(op.key);
    body.Str(leased ? std::string() : op.value);
  }
  Writer frame;
  frame.U32(static_cast<uint32_t>(body.out.size()));
  frame.U32(Crc(body.out));
  frame.out.insert(frame.out.end(), body.out.begin(), body.out.end());
  uint64_t before = journal_->size();
  Status st = journal_->Append(frame.out);
  if (st.ok()) st = journal_->Sync();
  if (st.ok()) return st;
  // Cut the journal back so the next record does not follow a torn one.
  Status cut = env_->Truncate(dir_ / kJournalFile, before);
  if (cut.ok()) {
    auto reopened = env_->OpenAppendable(dir_ / kJournalFile);
    if (reopened.ok()) {
      journal_ = std::move(*reopened);
      return st;
    }
    cut = reopened.take_error();
  }
  failed_ = MakeError(Errc::kIoError, "metadata journal unusable after a failed write (" +
                                          st.error().message + "): " + cut.error().message);
  MetadataLog()->error("{}", failed_.error().message);
  return st;
}

Result<RangeResult> EmbeddedKvStore::Get(const std::string& key) {
  std::lock_guard lock(mu_);
  RangeResult out;
  out.revision = revision_;
  auto it = data_.find(key);
  if (it != data_.end()) out.kvs.push_back(it->second);
  return out;
}

Result<RangeResult> EmbeddedKvStore::Range(const std::string& from, const std::string& end,
                                           Revision at, int64_t limit) {
  // A range end of one zero byte means "every key from `from` on", as in etcd.
  bool open_end = end == std::string(1, '\0');
  auto in_range = [&](const std::string& key) { return key >= from && (open_end || key < end); };
  std::lock_guard lock(mu_);
  if (at != 0 && at < compact_revision_) {
    return MakeError(Errc::kOutOfRange, "mvcc: required revision has been compacted");
  }
  if (at > revision_)
    return MakeError(Errc::kOutOfRange, "mvcc: required revision is a future revision");
  std::map<std::string, KeyValue> view;
  for (auto it = data_.lower_bound(from); it != data_.end() && in_range(it->first); ++it) {
    view.insert(*it);
  }
  if (at != 0) {  // undo the changes after `at`, newest first
    for (auto h = history_.rbegin(); h != history_.rend() && h->first > at; ++h) {
      const std::string& key = h->second.event.kv.key;
      if (!in_range(key)) continue;
      if (h->second.prev) {
        view[key] = *h->second.prev;
      } else {
        view.erase(key);
      }
    }
  }
  RangeResult out;
  out.revision = revision_;
  for (auto& [key, kv] : view) {
    if (limit > 0 && static_cast<int64_t>(out.kvs.size()) == limit) {
      out.more = true;
      break;
    }
    out.kvs.push_back(std::move(kv));
  }
  return out;
}

bool EmbeddedKvStore::CompareHolds(const KvCompare& c) const {
  auto it = data_.find(c.key);
  const KeyValue* kv = it == data_.end() ? nullptr : &it->second;
  switch (c.target) {
    case KvCompare::Target::kModRevision:
      return Holds(c.op, kv ? kv->mod_revision : 0, c.number);
    case KvCompare::Target::kCreateRevision:
      return Holds(c.op, kv ? kv->create_revision : 0, c.number);
    case KvCompare::Target::kVersion:
      return Holds(c.op, kv ? kv->version : 0, c.number);
    case KvCompare::Target::kValue:
      return kv != nullptr && Holds(c.op, kv->value, c.value);  // etcd: absent never matches
  }
  return false;
}

Status EmbeddedKvStore::ValidateTxn(std::span<const KvOp> ops) const {
  if (ops.size() > kMaxTxnOps) {
    return MakeError(Errc::kInvalidArgument, "too many operations in txn request");
  }
  size_t bytes = 0;
  std::set<std::string_view> keys;
  for (const KvOp& op : ops) {
    bytes += op.WireSize();
    if (op.kind != KvOp::Kind::kDeletePrefix && !keys.insert(op.key).second) {
      return MakeError(Errc::kInvalidArgument, "duplicate key given in txn request");
    }
    if (op.kind == KvOp::Kind::kPut && op.lease != 0 && !leases_.contains(op.lease)) {
      return MakeError(Errc::kNotFound, "requested lease not found");
    }
  }
  if (bytes > kMaxRequestBytes) return MakeError(Errc::kInvalidArgument, "request is too large");
  return Status::Ok();
}

Result<TxnResult> EmbeddedKvStore::Txn(std::span<const KvCompare> compares,
                                       std::span<const KvOp> ops) {
  std::lock_guard lock(mu_);
  if (!failed_.ok()) return failed_.error();
  if (compares.size() > kMaxTxnOps) {
    return MakeError(Errc::kInvalidArgument, "too many operations in txn request");
  }
  STRATA_RETURN_IF_ERROR(ValidateTxn(ops));
  for (const KvCompare& c : compares) {
    if (!CompareHolds(c)) return TxnResult{false, revision_};
  }
  // As etcd: a transaction that changes nothing (no ops, or deletes of
  // absent keys) takes no revision.
  if (!ChangesSomethingLocked(ops)) return TxnResult{true, revision_};
  Revision rev = revision_ + 1;
  STRATA_RETURN_IF_ERROR(JournalLocked(rev, ops));
  ApplyLocked(rev, ops, /*replay=*/false);
  revision_ = rev;
  TrimHistoryLocked();
  if (journal_->size() > options_.journal_snapshot_bytes) {
    Status st = WriteSnapshotLocked();
    if (!st.ok())
      MetadataLog()->warn("metadata snapshot failed (the journal keeps growing): {}",
                          st.error().message);
  }
  wake_.notify_all();
  return TxnResult{true, rev};
}

bool EmbeddedKvStore::ChangesSomethingLocked(std::span<const KvOp> ops) const {
  for (const KvOp& op : ops) {
    switch (op.kind) {
      case KvOp::Kind::kPut:
        return true;
      case KvOp::Kind::kDelete:
        if (data_.contains(op.key)) return true;
        break;
      case KvOp::Kind::kDeletePrefix: {
        auto it = data_.lower_bound(op.key);
        if (it != data_.end() && HasPrefix(it->first, op.key)) return true;
        break;
      }
    }
  }
  return false;
}

void EmbeddedKvStore::ApplyLocked(Revision rev, std::span<const KvOp> ops, bool replay) {
  for (const KvOp& op : ops) {
    switch (op.kind) {
      case KvOp::Kind::kPut:
        PutLocked(rev, op, replay);
        break;
      case KvOp::Kind::kDelete: {
        auto it = data_.find(op.key);
        if (it != data_.end()) EraseLocked(rev, it, replay);
        break;
      }
      case KvOp::Kind::kDeletePrefix: {
        auto it = data_.lower_bound(op.key);
        while (it != data_.end() && HasPrefix(it->first, op.key)) {
          auto next = std::next(it);
          EraseLocked(rev, it, replay);
          it = next;
        }
        break;
      }
    }
  }
}

void EmbeddedKvStore::PutLocked(Revision rev, const KvOp& op, bool replay) {
  auto [it, inserted] = data_.try_emplace(op.key);
  std::optional<KeyValue> prev;
  if (!inserted) prev = it->second;
  KeyValue& kv = it->second;
  if (prev && prev->lease != 0 && prev->lease != op.lease) leases_[prev->lease].keys.erase(op.key);
  kv.key = op.key;
  kv.value = op.value;
  if (inserted) kv.create_revision = rev;
  kv.mod_revision = rev;
  kv.version = inserted ? 1 : kv.version + 1;
  kv.lease = op.lease;
  if (op.lease != 0) leases_[op.lease].keys.insert(op.key);
  if (!replay) history_.push_back({rev, Change{WatchEvent{WatchEvent::Type::kPut, kv}, prev}});
}

void EmbeddedKvStore::EraseLocked(Revision rev, std::map<std::string, KeyValue>::iterator it,
                                  bool replay) {
  KeyValue prev = std::move(it->second);
  data_.erase(it);
  if (prev.lease != 0) {
    auto lease = leases_.find(prev.lease);
    if (lease != leases_.end()) lease->second.keys.erase(prev.key);
  }
  if (replay) return;
  WatchEvent ev{WatchEvent::Type::kDelete, KeyValue{prev.key, {}, 0, rev, 0, 0}};
  history_.push_back({rev, Change{std::move(ev), std::move(prev)}});
}

void EmbeddedKvStore::TrimHistoryLocked() {
  Revision floor = revision_ - options_.history_revisions;
  if (floor <= compact_revision_) return;
  compact_revision_ = floor;
  while (!history_.empty() && history_.front().first < compact_revision_) history_.pop_front();
}

Status EmbeddedKvStore::Compact(Revision rev) {
  std::lock_guard lock(mu_);
  if (rev > revision_)
    return MakeError(Errc::kOutOfRange, "mvcc: required revision is a future revision");
  if (rev <= compact_revision_) {
    return MakeError(Errc::kOutOfRange, "mvcc: required revision has been compacted");
  }
  compact_revision_ = rev;
  while (!history_.empty() && history_.front().first < compact_revision_) history_.pop_front();
  wake_.notify_all();
  return Status::Ok();
}

Result<LeaseId> EmbeddedKvStore::GrantLease(milliseconds ttl) {
  std::lock_guard lock(mu_);
  LeaseId id = next_lease_++;
  // Whole seconds, as etcd grants them, so both backends expire alike.
  int64_t ttl_ms = std::max<int64_t>(1, (ttl.count() + 999) / 1000) * 1000;
  leases_[id] = Lease{ttl_ms, SteadyMs() + ttl_ms, {}};
  wake_.notify_all();
  return id;
}

Result<milliseconds> EmbeddedKvStore::KeepAliveOnce(LeaseId lease) {
  std::lock_guard lock(mu_);
  auto it = leases_.find(lease);
  if (it == leases_.end()) {
    return MakeError(Errc::kNotFound, "lease " + std::to_string(lease) + " expired");
  }
  it->second.deadline_ms = SteadyMs() + it->second.ttl_ms;
  return milliseconds{it->second.ttl_ms};
}

Status EmbeddedKvStore::RevokeLease(LeaseId lease) {
  std::lock_guard lock(mu_);
  auto it = leases_.find(lease);
  if (it == leases_.end()) return MakeError(Errc::kNotFound, "requested lease not found");
  it->second.deadline_ms = 0;  // the worker deletes its keys at once
  ExpireLeasesLocked(SteadyMs());
  return Status::Ok();
}

void EmbeddedKvStore::ExpireLeasesLocked(int64_t now_ms) {
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.deadline_ms > now_ms) {
      ++it;
      continue;
    }
    std::vector<KvOp> ops;
    for (const std::string& key : it->second.keys) ops.push_back(KvOp::Delete(key));
    it = leases_.erase(it);
    if (ops.empty()) continue;
    // Leased keys are never in the journal, so their deletion needs no record.
    Revision rev = ++revision_;
    ApplyLocked(rev, ops, /*replay=*/false);
    TrimHistoryLocked();
  }
  wake_.notify_all();
}

Result<std::unique_ptr<KvWatch>> EmbeddedKvStore::Watch(const std::string& prefix, Revision start,
                                                        WatchCallback callback) {
  auto w = std::make_shared<Watcher>();
  w->prefix = prefix;
  w->callback = std::move(callback);
  std::lock_guard lock(mu_);
  w->next = start == 0 ? revision_ + 1 : start;
  watchers_.insert(w);
  wake_.notify_all();
  return std::unique_ptr<KvWatch>(std::make_unique<Handle>(this, std::move(w)));
}

void EmbeddedKvStore::Unwatch(const std::shared_ptr<Watcher>& w) {
  std::lock_guard dispatch(dispatch_mu_);  // waits out a callback in flight
  w->cancelled = true;
  std::lock_guard lock(mu_);
  watchers_.erase(w);
}

void EmbeddedKvStore::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    ExpireLeasesLocked(SteadyMs());
    std::vector<std::pair<std::shared_ptr<Watcher>, WatchBatch>> due;
    for (const auto& w : watchers_) {
      if (w->next > revision_) continue;
      WatchBatch batch;
      if (w->next < compact_revision_) {
        batch.compact_revision = compact_revision_;
        w->next = INT64_MAX;  // over; the owner watches anew
      } else {
        for (const auto& [rev, change] : history_) {
          if (rev >= w->next && HasPrefix(change.event.kv.key, w->prefix)) {
            batch.events.push_back(change.event);
          }
        }
        batch.revision = revision_;
        w->next = revision_ + 1;
        if (batch.events.empty()) continue;  // nothing under this prefix
      }
      due.emplace_back(w, std::move(batch));
    }
    if (!due.empty()) {
      lock.unlock();
      {
        std::lock_guard dispatch(dispatch_mu_);
        for (auto& [w, batch] : due) {
          if (!w->cancelled) w->callback(batch);
        }
      }
      lock.lock();
      continue;
    }
    int64_t next_deadline = SteadyMs() + 1000;
    for (const auto& [id, lease] : leases_)
      next_deadline = std::min(next_deadline, lease.deadline_ms);
    wake_.wait_for(lock, milliseconds{std::max<int64_t>(1, next_deadline - SteadyMs())});
  }
}

Result<QuorumStatus> EmbeddedKvStore::DescribeQuorum() {
  std::lock_guard lock(mu_);
  QuorumStatus out;
  out.leader_id = 1;
  out.term = 1;
  out.commit_index = revision_;
  out.members.push_back({1, "embedded", dir_.string(), true, revision_, revision_});
  return out;
}

}  // namespace strata::cluster
