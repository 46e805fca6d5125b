#include "storage/high_watermark_checkpoint.h"

#include <fmt/format.h>

#include <sstream>

namespace strata::storage {

namespace fs = std::filesystem;

Result<HighWatermarks> ReadHighWatermarks(const fs::path& log_dir, Env* env) {
  HighWatermarks out;
  std::error_code ec;
  if (!fs::exists(log_dir / kHighWatermarkCheckpoint, ec)) return out;
  STRATA_ASSIGN_OR_RETURN(Bytes data, env->ReadFile(log_dir / kHighWatermarkCheckpoint));
  std::istringstream in(std::string(data.begin(), data.end()));
  auto corrupt = [&](const std::string& what) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("{}/{}: {}", log_dir.string(), kHighWatermarkCheckpoint, what));
  };
  int version = -1;
  size_t count = 0;
  if (!(in >> version) || version != 0) return corrupt("unknown version");
  if (!(in >> count)) return corrupt("no entry count");
  for (size_t i = 0; i < count; ++i) {
    std::string topic;
    int32_t partition = -1;
    int64_t offset = -1;
    if (!(in >> topic >> partition >> offset) || partition < 0 || offset < 0) {
      return corrupt(fmt::format("entry {} of {} is malformed", i + 1, count));
    }
    out[{topic, partition}] = offset;
  }
  return out;
}

Status WriteHighWatermarks(const fs::path& log_dir, const HighWatermarks& marks, Env* env) {
  std::string text = fmt::format("0\n{}\n", marks.size());
  for (const auto& [tp, offset] : marks) {
    text += fmt::format("{} {} {}\n", tp.first, tp.second, offset);
  }
  return env->WriteFileAtomic(log_dir / kHighWatermarkCheckpoint,
                              ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace strata::storage
