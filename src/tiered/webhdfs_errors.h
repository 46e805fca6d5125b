#pragma once
// Maps a failed WebHDFS reply (HTTP status + optional RemoteException JSON body) to an Error:
//   {"RemoteException":{"exception":"FileNotFoundException","javaClassName":..,"message":..}}
// The Java exception name decides when present (FileNotFoundException -> kNotFound,
// FileAlreadyExistsException -> kAlreadyExists, SafeModeException/RetriableException/
// StandbyException -> kUnavailable, AccessControlException -> kInvalidArgument, EOFException ->
// kOutOfRange, quota exceptions -> kTooLarge, ...); otherwise the status does (404 -> kNotFound,
// 5xx -> kUnavailable, 4xx -> kInvalidArgument, 403 -> kIoError).
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::tiered {

// context: what was being done ("GETFILESTATUS /strata/x"), prefixed to the message.
Error MapWebHdfsError(long http_status, ByteView body, std::string_view context);

}  // namespace strata::tiered
