#pragma once
// Who is appending to a log, which decides the checks its batches get
// (Kafka's AppendOrigin).

namespace strata::storage {

enum class AppendOrigin {
  kClient,       // a producer: epoch, sequence, duplicate and transaction checks
  kCoordinator,  // end-transaction markers and the group coordinator's
                 // transactional offsets: no sequence or duplicate checks
                 // (they all carry sequence 0 or -1)
  kReplication,  // a follower or recovery: what the leader accepted is applied
};

}  // namespace strata::storage
