#pragma once
// The XML bodies of the S3 REST API that the S3 backend reads and writes: list results, multipart
// upload replies, error documents and DeleteObjects. Parsing is libexpat's; a document that is
// not well-formed, or lacks what the reply must carry, is kIoError (a broken transfer or a store
// that does not speak S3), never a crash.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::tiered::s3 {

// An <Error> document: what every failed S3 request answers (and CompleteMultipartUpload may
// answer with a 200).
struct ErrorDocument {
  std::string code;  // "NoSuchKey", "SlowDown", ...
  std::string message;
};

struct ListedObject {
  std::string key;
  uint64_t size = 0;
  int64_t last_modified_ms = 0;
};

// One page of ListObjectsV2.
struct ListPage {
  std::vector<ListedObject> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_continuation_token;
};

struct MultipartUpload {
  std::string key;
  std::string upload_id;
  int64_t initiated_ms = 0;
};

// One page of ListMultipartUploads.
struct UploadsPage {
  std::vector<MultipartUpload> uploads;
  bool truncated = false;
  std::string next_key_marker;
  std::string next_upload_id_marker;
};

// A key DeleteObjects could not delete.
struct DeleteFailure {
  std::string key;
  std::string code;
  std::string message;
};

// A reply body as the text it is.
inline std::string_view AsText(ByteView body) {
  return {reinterpret_cast<const char*>(body.data()), body.size()};
}

// Set when `body` is an <Error> document (root element "Error"); otherwise an empty code.
ErrorDocument ParseError(std::string_view body);
Result<ListPage> ParseListPage(std::string_view body);
Result<UploadsPage> ParseUploadsPage(std::string_view body);
// The UploadId of an InitiateMultipartUploadResult.
Result<std::string> ParseUploadId(std::string_view body);
// The <Error> entries of a DeleteResult (quiet mode lists only those).
Result<std::vector<DeleteFailure>> ParseDeleteResult(std::string_view body);

// CompleteMultipartUpload's body; parts are (part number, ETag) in ascending order.
std::string CompleteMultipartBody(const std::vector<std::pair<int, std::string>>& parts);
// DeleteObjects' body in quiet mode (at most 1000 keys).
std::string DeleteObjectsBody(const std::vector<std::string>& keys);

// "2026-12-07T11:00:00.000Z" as milliseconds since the epoch; 0 when unparsable.
int64_t ParseIsoTimeMs(std::string_view iso);

}  // namespace strata::tiered::s3
