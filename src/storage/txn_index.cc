#include "storage/txn_index.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata::storage {

namespace fs = std::filesystem;

namespace {

void EncodeOne(const AbortedTxn& txn, uint8_t* p) {
  StoreBE16(p, static_cast<uint16_t>(kAbortedTxnVersion));
  StoreBE64(p + 2, static_cast<uint64_t>(txn.producer_id));
  StoreBE64(p + 10, static_cast<uint64_t>(txn.first_offset.value()));
  StoreBE64(p + 18, static_cast<uint64_t>(txn.last_offset.value()));
  StoreBE64(p + 26, static_cast<uint64_t>(txn.last_stable_offset.value()));
}

AbortedTxn DecodeOne(const uint8_t* p) {
  return AbortedTxn{static_cast<int64_t>(LoadBE64(p + 2)),
                    Offset(static_cast<int64_t>(LoadBE64(p + 10))),
                    Offset(static_cast<int64_t>(LoadBE64(p + 18))),
                    Offset(static_cast<int64_t>(LoadBE64(p + 26)))};
}

// Why `txn` cannot follow `prev` (null: first entry) in an index based at
// `base`, or "" when it can.
std::string EntryProblem(const AbortedTxn& txn, const AbortedTxn* prev, Offset base) {
  if (txn.last_offset < base) {
    return fmt::format("last offset {} is below the segment base {}", txn.last_offset, base);
  }
  if (txn.last_offset < txn.first_offset) {
    return fmt::format("last offset {} is below the first offset {}", txn.last_offset,
                       txn.first_offset);
  }
  if (prev != nullptr && txn.last_offset <= prev->last_offset) {
    return fmt::format("last offset {} is not above the previous entry's {}", txn.last_offset,
                       prev->last_offset);
  }
  return {};
}

}  // namespace

Bytes EncodeAbortedTxns(std::span<const AbortedTxn> txns) {
  Bytes out(txns.size() * kAbortedTxnSize);
  for (size_t i = 0; i < txns.size(); ++i) EncodeOne(txns[i], &out[i * kAbortedTxnSize]);
  return out;
}

Result<std::vector<AbortedTxn>> DecodeAbortedTxns(ByteView data, Offset segment_base) {
  if (data.size() % kAbortedTxnSize != 0) {
    return MakeError(Errc::kCorrupt, fmt::format("length {} is not a multiple of {}", data.size(),
                                                 kAbortedTxnSize));
  }
  std::vector<AbortedTxn> txns;
  txns.reserve(data.size() / kAbortedTxnSize);
  for (size_t pos = 0; pos < data.size(); pos += kAbortedTxnSize) {
    auto version = static_cast<int16_t>(LoadBE16(&data[pos]));
    if (version != kAbortedTxnVersion) {
      return MakeError(Errc::kCorrupt,
                       fmt::format("entry {} has version {}", pos / kAbortedTxnSize, version));
    }
    AbortedTxn txn = DecodeOne(&data[pos]);
    std::string problem = EntryProblem(txn, txns.empty() ? nullptr : &txns.back(), segment_base);
    if (!problem.empty()) {
      return MakeError(Errc::kCorrupt, fmt::format("entry {}: {}", pos / kAbortedTxnSize, problem));
    }
    txns.push_back(txn);
  }
  return txns;
}

AbortedTxnSearch CollectAbortedTxns(std::span<const AbortedTxn> entries, Offset fetch_offset,
                                    Offset upper_bound) {
  // A plain scan from the first entry, as Kafka's: an entry below
  // fetch_offset can still end the search.
  AbortedTxnSearch result;
  for (const AbortedTxn& txn : entries) {
    if (txn.last_offset >= fetch_offset && txn.first_offset < upper_bound) {
      result.aborted.push_back(txn);
    }
    if (txn.last_stable_offset >= upper_bound) {
      result.complete = true;
      break;
    }
  }
  return result;
}

Result<std::unique_ptr<TxnIndex>> TxnIndex::Open(const fs::path& path, Offset segment_base,
                                                 Env* env) {
  std::unique_ptr<TxnIndex> index(new TxnIndex(path, segment_base, env));
  Result<Bytes> data = env->ReadFile(path);
  if (!data.ok()) {
    if (data.error().code != Errc::kNotFound) return data.take_error();
    return index;  // created by the first Append
  }
  index->file_exists_ = true;
  auto entries = DecodeAbortedTxns(*data, segment_base);
  if (!entries.ok()) {
    return MakeError(Errc::kCorrupt, fmt::format("transaction index {}: {}", path.string(),
                                                 entries.error().message));
  }
  index->entries_ = std::move(*entries);
  return index;
}

Result<std::unique_ptr<TxnIndex>> TxnIndex::Create(const fs::path& path, Offset segment_base,
                                                   Env* env) {
  STRATA_RETURN_IF_ERROR(env->RemoveFile(path));
  return std::unique_ptr<TxnIndex>(new TxnIndex(path, segment_base, env));
}

std::optional<Offset> TxnIndex::last_offset() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.back().last_offset;
}

Status TxnIndex::CheckAppendable(const AbortedTxn& txn) const {
  if (deleted_) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("transaction index {} was deleted", path_.string()));
  }
  std::string problem = EntryProblem(txn, entries_.empty() ? nullptr : &entries_.back(), base_);
  if (!problem.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("transaction index {}: {}", path_.string(), problem));
  }
  return Status::Ok();
}

Status TxnIndex::OpenWriter() {
  if (writer_) return Status::Ok();
  STRATA_ASSIGN_OR_RETURN(writer_, env_->OpenAppendable(path_));
  if (!file_exists_) needs_dir_sync_ = true;
  file_exists_ = true;
  return Status::Ok();
}

Status TxnIndex::Append(const AbortedTxn& txn) {
  STRATA_RETURN_IF_ERROR(CheckAppendable(txn));
  STRATA_RETURN_IF_ERROR(RepairTail());
  STRATA_RETURN_IF_ERROR(OpenWriter());
  Bytes bytes = EncodeAbortedTxns({&txn, 1});
  needs_sync_ = true;
  Status written = writer_->Append(bytes);
  if (!written.ok()) {
    // Part of the entry may have landed (disk full mid-write). Cut it off so
    // the file matches the entries again; if that fails as well, the next
    // Append retries it before writing. The write's error is the one to report.
    tail_dirty_ = true;
    (void)RepairTail();
    return written;
  }
  entries_.push_back(txn);
  return Status::Ok();
}

Status TxnIndex::RepairTail() {
  if (!tail_dirty_) return Status::Ok();
  STRATA_RETURN_IF_ERROR(env_->Truncate(path_, size_bytes()));
  writer_.reset();  // its idea of the size is stale
  tail_dirty_ = false;
  return Status::Ok();
}

Status TxnIndex::TruncateEntries(size_t keep) {
  if (keep == entries_.size() && !tail_dirty_) return Status::Ok();
  // After Delete() only the entries readers still see are left to cut.
  if (file_exists_) STRATA_RETURN_IF_ERROR(env_->Truncate(path_, keep * kAbortedTxnSize));
  entries_.resize(keep);
  writer_.reset();
  tail_dirty_ = false;
  needs_sync_ = true;
  return Status::Ok();
}

Status TxnIndex::TruncateTo(Offset offset) {
  auto first_dropped =
      std::lower_bound(entries_.begin(), entries_.end(), offset,
                       [](const AbortedTxn& txn, Offset o) { return txn.last_offset < o; });
  return TruncateEntries(static_cast<size_t>(first_dropped - entries_.begin()));
}

Status TxnIndex::Reset() { return TruncateEntries(0); }

Status TxnIndex::Flush() {
  if (needs_sync_ && file_exists_) {
    STRATA_RETURN_IF_ERROR(OpenWriter());
    STRATA_RETURN_IF_ERROR(writer_->Sync());
  }
  needs_sync_ = false;
  if (needs_dir_sync_) {
    STRATA_RETURN_IF_ERROR(env_->SyncDir(path_.parent_path()));
    needs_dir_sync_ = false;
  }
  return Status::Ok();
}

Status TxnIndex::Delete() {
  writer_.reset();
  STRATA_RETURN_IF_ERROR(env_->RemoveFile(path_));
  deleted_ = true;
  file_exists_ = false;
  tail_dirty_ = needs_sync_ = needs_dir_sync_ = false;
  return Status::Ok();
}

Status TxnIndex::RenameTo(const fs::path& new_path) {
  if (file_exists_) {
    Status renamed = env_->RenameFile(path_, new_path);
    // A vanished empty file is no loss (the next Append creates it anew);
    // vanished entries are.
    bool vanished_empty = !renamed.ok() && renamed.error().code == Errc::kNotFound &&
                          entries_.empty() && !tail_dirty_;
    if (!renamed.ok() && !vanished_empty) return renamed;
    if (vanished_empty) {
      writer_.reset();
      file_exists_ = false;
    }
  }
  path_ = new_path;
  return Status::Ok();
}

}  // namespace strata::storage
