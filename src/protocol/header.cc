#include "protocol/header.h"

namespace strata::protocol {

void ReadRequestHeader(WireReader& reader, RequestHeader& header) {
  reader.i16(header.api_key);
  reader.i16(header.api_version);
  reader.i32(header.correlation_id);
  reader.legacy_nullable_str(header.client_id);
  reader.tagged_fields();  // no-op unless the reader is flexible
}

void WriteRequestHeader(WireWriter& writer, const RequestHeader& header) {
  writer.i16(header.api_key);
  writer.i16(header.api_version);
  writer.i32(header.correlation_id);
  writer.legacy_nullable_str(header.client_id);
  writer.tagged_fields();
}

void WriteResponseHeader(Bytes& out, int32_t correlation_id, bool flexible_header) {
  WireWriter w(out, flexible_header);
  w.i32(correlation_id);
  w.tagged_fields();
}

}  // namespace strata::protocol
