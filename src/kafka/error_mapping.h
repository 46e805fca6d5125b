#pragma once
// The one place internal error codes become Kafka error codes.
#include "base/result.h"
#include "protocol/error_code.h"

namespace strata::kafka {

// For produce: storage/validation errors as Kafka codes. Unknown outcomes are
// REQUEST_TIMED_OUT, never UNKNOWN_SERVER_ERROR (KAFKA-14034).
protocol::ErrorCode ProduceErrorCode(Errc errc);

// For the controller's topic writes (create, delete, add partitions): a
// store that cannot be reached is retriable (REQUEST_TIMED_OUT, as Kafka's
// controller timing out); a broker that is no longer the controller says so
// (NOT_CONTROLLER, so the client finds the new one).
protocol::ErrorCode TopicWriteErrorCode(Errc errc);

// For reads and admin paths.
protocol::ErrorCode GenericErrorCode(Errc errc);

}  // namespace strata::kafka
