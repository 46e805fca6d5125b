#pragma once
// Result<T>: a value or an Error, returned by every fallible call on hot paths.
// Success carries no string and no allocation; errors carry a subsystem-neutral
// code (Errc) plus a message for logs. Kafka error codes are produced only at
// the protocol edge (src/kafka), by mapping Errc.
#include <string>
#include <utility>
#include <variant>

#include "base/check.h"

namespace strata {

enum class Errc {
  kOk = 0,
  kIoError,          // disk or socket failure
  kCorrupt,          // checksum or structure mismatch in stored or received data
  kInvalidArgument,  // caller passed something malformed
  kNotFound,
  kAlreadyExists,
  kOutOfRange,   // offset outside [log start, log end]
  kTooLarge,     // record/batch/request beyond a configured limit
  kUnsupported,  // valid but not implemented (e.g. an old message format)
  kTimeout,
  kUnavailable,  // retriable: something we depend on is down
  kDuplicateSequence,
  kOutOfOrderSequence,
  kInvalidProducerEpoch,
  kUnknownProducerId,
  kShuttingDown,
  kFenced,  // the caller's role (controller, leader) has passed to another
  kInvalidTxnState,       // a write that does not fit its producer's transaction
  kTxnCoordinatorFenced,  // a marker from an older transaction coordinator
};

const char* ErrcName(Errc c);

// An error with context. Cheap to move; only built on failure.
struct Error {
  Errc code = Errc::kOk;
  std::string message;
};

inline Error MakeError(Errc code, std::string message) { return Error{code, std::move(message)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    STRATA_CHECK(ok(), "Result::value() on error: {}", std::get<1>(v_).message);
    return std::get<0>(v_);
  }
  const T& value() const& {
    STRATA_CHECK(ok(), "Result::value() on error: {}", std::get<1>(v_).message);
    return std::get<0>(v_);
  }
  T&& value() && {
    STRATA_CHECK(ok(), "Result::value() on error: {}", std::get<1>(v_).message);
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }

  const Error& error() const { return std::get<1>(v_); }
  Error&& take_error() { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

// Status: a Result without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : err_(std::move(e)) {}  // NOLINT
  static Status Ok() { return {}; }
  bool ok() const { return err_.code == Errc::kOk; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return err_; }
  Error&& take_error() { return std::move(err_); }

 private:
  Error err_;
};

}  // namespace strata

// Propagate an error from a Status- or Result-returning expression.
#define STRATA_RETURN_IF_ERROR(expr)        \
  do {                                      \
    auto _st = (expr);                      \
    if (!_st.ok()) return _st.take_error(); \
  } while (0)

#define STRATA_CONCAT_INNER(a, b) a##b
#define STRATA_CONCAT(a, b) STRATA_CONCAT_INNER(a, b)
// auto x = STRATA_TRY(expr) is not expressible in standard C++, so this assigns.
#define STRATA_ASSIGN_OR_RETURN(lhs, expr)                                                      \
  auto STRATA_CONCAT(_res_, __LINE__) = (expr);                                                 \
  if (!STRATA_CONCAT(_res_, __LINE__).ok()) return STRATA_CONCAT(_res_, __LINE__).take_error(); \
  lhs = std::move(STRATA_CONCAT(_res_, __LINE__)).value()
