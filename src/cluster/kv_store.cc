#include "cluster/kv_store.h"

namespace strata::cluster {

KvCompare KvCompare::ModRevisionIs(std::string key, Revision rev) {
  return KvCompare{std::move(key), Target::kModRevision, Op::kEqual, rev, {}};
}

KvCompare KvCompare::Absent(std::string key) {
  return KvCompare{std::move(key), Target::kCreateRevision, Op::kEqual, 0, {}};
}

KvCompare KvCompare::Exists(std::string key) {
  return KvCompare{std::move(key), Target::kCreateRevision, Op::kGreater, 0, {}};
}

KvCompare KvCompare::CreatedAt(std::string key, Revision rev) {
  return KvCompare{std::move(key), Target::kCreateRevision, Op::kEqual, rev, {}};
}

KvOp KvOp::Put(std::string key, std::string value, LeaseId lease) {
  return KvOp{Kind::kPut, std::move(key), std::move(value), lease};
}

KvOp KvOp::Delete(std::string key) { return KvOp{Kind::kDelete, std::move(key), {}, 0}; }

KvOp KvOp::DeletePrefix(std::string prefix) {
  return KvOp{Kind::kDeletePrefix, std::move(prefix), {}, 0};
}

std::string PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    auto last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // etcd: every key >= key
}

Result<TxnResult> WriteInBatches(KvStore& store, std::span<const KvCompare> guards,
                                 std::span<const KvOp> ops) {
  size_t guard_bytes = 0;
  for (const KvCompare& g : guards) guard_bytes += g.key.size() + g.value.size() + 16;
  TxnResult last{true, 0};
  size_t begin = 0;
  while (begin < ops.size()) {
    size_t end = begin;
    size_t bytes = guard_bytes;
    while (end < ops.size() && end - begin < kMaxTxnOps) {
      size_t next = ops[end].WireSize();
      // One op larger than the limit still goes alone (etcd then refuses it).
      if (end > begin && bytes + next > kMaxRequestBytes) break;
      bytes += next;
      ++end;
    }
    STRATA_ASSIGN_OR_RETURN(last, store.Txn(guards, ops.subspan(begin, end - begin)));
    if (!last.succeeded) return last;
    begin = end;
  }
  return last;
}

}  // namespace strata::cluster
