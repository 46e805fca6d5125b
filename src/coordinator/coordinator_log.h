#pragma once
// CoordinatorLog: a coordinator's view of the partitions of its internal
// topic (__consumer_offsets for the group coordinator, __transaction_state
// for the transaction coordinator). Appends coordinator records (key/value
// pairs, value null = tombstone) as one uncompressed v2 batch per call, and
// replays a partition from its start. Each call's records land in one batch,
// so they are written atomically.
//
// Thread-safety: safe from any thread (storage::Log serialises appends).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/clock.h"
#include "base/offset.h"
#include "base/result.h"
#include "storage/log.h"

namespace strata::coordinator {

struct CoordinatorRecord {
  Bytes key;
  std::optional<Bytes> value;  // nullopt = tombstone
};

class CoordinatorLog {
 public:
  // Where appends go: the broker's partition (Partition::AppendAsLeader),
  // which stamps them with the leader epoch it leads the partition at (as a
  // produce is, so followers can truncate by epoch after a failover), moves
  // the high watermark, wakes fetches and refuses them without leadership.
  struct Appended {
    Offset last_offset = kNoOffset;
    int32_t leader_epoch = -1;
  };
  using Appender = std::function<Result<Appended>(int32_t partition, MutableByteView batch,
                                                  const std::vector<storage::BatchInfo>& infos)>;
  // `logs` returns the log of a partition to read (nullptr if missing).
  using LogProvider = std::function<std::shared_ptr<storage::Log>(int32_t partition)>;
  CoordinatorLog(std::string topic, int32_t partitions, LogProvider logs, Appender appender,
                 Clock* clock);

  const std::string& topic() const { return topic_; }

  int32_t partitions() const { return partitions_; }
  // Whether this broker holds `partition` (in a cluster, the others are
  // other brokers' to coordinate).
  bool Hosts(int32_t partition) const { return logs_(partition) != nullptr; }

  // Appends `records` to `partition` and returns the batch's last offset; the
  // records are durable in the log (as any produce with acks=1) when this
  // returns. With `txn`, as one
  // transactional batch of that producer (the group coordinator's
  // transactional offsets), which the transaction's marker later commits or
  // aborts.
  struct TxnProducer {
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    uint64_t verification_guard = 0;  // storage::BatchInfo::txn_verification_guard
  };
  Result<Offset> Append(int32_t partition, const std::vector<CoordinatorRecord>& records,
                        std::optional<TxnProducer> txn = std::nullopt);

  // The latest end of this broker's appends to `partition`: the last offset
  // and the leader epoch it was stamped with. A caller whose Append returned
  // knows its records are committed once this is (Kafka's coordinator
  // answers only then, as an acks=all produce).
  struct LastAppend {
    Offset last_offset = kNoOffset;
    int32_t leader_epoch = -1;
  };
  std::optional<LastAppend> LastAppended(int32_t partition) const;

  // Calls visit(key, value) for every record of `partition` in offset order
  // (value nullopt for tombstones). Control batches are skipped.
  using Visitor = std::function<void(ByteView key, std::optional<ByteView> value)>;
  Status Replay(int32_t partition, const Visitor& visit) const;
  // Replay with transactions: each record with the last offset of its batch
  // and the batch's producer id when it is transactional (-1 otherwise), and
  // each transaction marker as (producer id, committed).
  struct RecordBatchOf {
    Offset last_offset;
    int64_t txn_producer_id = -1;
  };
  using TxnVisitor =
      std::function<void(ByteView key, std::optional<ByteView> value, const RecordBatchOf& batch)>;
  using MarkerVisitor = std::function<void(int64_t producer_id, bool committed)>;
  Status ReplayWithTransactions(int32_t partition, const TxnVisitor& visit,
                                const MarkerVisitor& marker) const;

 private:
  std::string topic_;
  int32_t partitions_;
  LogProvider logs_;
  Appender appender_;
  Clock* clock_;
  mutable std::mutex last_mu_;
  std::map<int32_t, LastAppend> last_;  // the latest, whatever order appends return in
};

}  // namespace strata::coordinator
