#include "storage/record_scan.h"

#include "protocol/records.h"

namespace strata::storage {

namespace {
// Stored batches passed validation when produced; this only bounds memory.
constexpr size_t kMaxDecompressed = 256u << 20;
}  // namespace

Status ForEachRecordTimestamp(ByteView batch, const protocol::BatchHeader& h,
                              const std::function<bool(Offset, int64_t)>& visit) {
  if (h.log_append_time()) {
    for (Offset off = h.base_offset; off <= h.last_offset(); ++off) {
      if (!visit(off, h.max_timestamp)) break;
    }
    return Status::Ok();
  }
  Bytes scratch;
  STRATA_ASSIGN_OR_RETURN(ByteView section,
                          protocol::RecordsSection(h, batch, kMaxDecompressed, scratch));
  protocol::RecordParser parser(section);
  protocol::Record record;
  for (int32_t i = 0; i < h.records_count; ++i) {
    STRATA_RETURN_IF_ERROR(parser.Next(record));
    if (!visit(h.base_offset + record.offset_delta, h.base_timestamp + record.timestamp_delta))
      break;
  }
  return Status::Ok();
}

}  // namespace strata::storage
