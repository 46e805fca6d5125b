#include "storage/checkpoints.h"

#include <fmt/format.h>

#include <charconv>

namespace strata::storage {

namespace fs = std::filesystem;

Result<std::optional<int64_t>> ReadOffsetFile(const fs::path& dir, std::string_view name,
                                              Env* env) {
  fs::path path = dir / name;
  auto data = env->ReadFile(path);
  if (!data.ok()) {
    if (data.error().code == Errc::kNotFound) return std::optional<int64_t>();
    return data.take_error();
  }
  std::string_view text(reinterpret_cast<const char*>(data->data()), data->size());
  auto bad = [&] {
    return MakeError(Errc::kCorrupt, fmt::format("{} is malformed", path.string()));
  };
  if (text.substr(0, 2) != "0\n") return bad();
  text.remove_prefix(2);
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  int64_t value = -1;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) return bad();
  return std::optional<int64_t>(value);
}

Status WriteOffsetFile(const fs::path& dir, std::string_view name, int64_t offset, Env* env) {
  std::string text = fmt::format("0\n{}\n", offset);
  return env->WriteFileAtomic(dir / name,
                              ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Result<std::optional<int64_t>> ReadLogStartOffset(const fs::path& dir, Env* env) {
  return ReadOffsetFile(dir, kLogStartOffsetFile, env);
}

Status WriteLogStartOffset(const fs::path& dir, int64_t offset, Env* env) {
  return WriteOffsetFile(dir, kLogStartOffsetFile, offset, env);
}

bool HasCleanShutdownMarker(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / kCleanShutdownFile, ec);
}

Status WriteCleanShutdownMarker(const fs::path& dir, Env* env) {
  return env->WriteFileAtomic(dir / kCleanShutdownFile, ByteView());
}

Status RemoveCleanShutdownMarker(const fs::path& dir, Env* env) {
  STRATA_RETURN_IF_ERROR(env->RemoveFile(dir / kCleanShutdownFile));
  return env->SyncDir(dir);
}

}  // namespace strata::storage
