#include "broker/local_replicas.h"

#include <fmt/format.h>

#include <map>

#include "base/env.h"

namespace strata::broker {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMetaProperties = "meta.properties";
constexpr const char* kPartitionMetadata = "partition.metadata";
constexpr const char* kCleanShutdown = ".strata_clean_shutdown";
constexpr const char* kNewLogDir = ".strata_new_log_dir";

// "key=value" (meta.properties) or "key: value" (partition.metadata) lines.
std::map<std::string, std::string> ParseLines(const Bytes& data, char separator) {
  std::map<std::string, std::string> out;
  std::string text(data.begin(), data.end());
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    size_t at = line.find(separator);
    if (at == std::string::npos) continue;
    std::string value = line.substr(at + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    out[line.substr(0, at)] = value;
  }
  return out;
}

Status WriteText(const fs::path& path, const std::string& text, Env* env = Env::Default()) {
  return env->WriteFileAtomic(path,
                              ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace

Status CheckMetaProperties(const fs::path& log_dir, const std::string& cluster_id,
                           int32_t node_id) {
  const fs::path path = log_dir / kMetaProperties;
  auto read = Env::Default()->ReadFile(path);
  if (!read.ok() && read.error().code == Errc::kNotFound) {
    return WriteText(path,
                     fmt::format("version=1\ncluster.id={}\nnode.id={}\n", cluster_id, node_id));
  }
  if (!read.ok()) return read.take_error();
  auto props = ParseLines(*read, '=');
  if (props.count("cluster.id") && props["cluster.id"] != cluster_id) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("Invalid cluster.id in {}: the data here belongs to cluster {}, "
                                 "but the metadata store is cluster {} (check "
                                 "strata.metadata.backend, strata.etcd.endpoints and "
                                 "strata.etcd.prefix)",
                                 path.string(), props["cluster.id"], cluster_id));
  }
  if (props.count("node.id") && props["node.id"] != std::to_string(node_id)) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("Stored node id {} in {} doesn't match the configured node.id {}",
                                 props["node.id"], path.string(), node_id));
  }
  return Status::Ok();
}

Result<int64_t> ReadNewLogDirMarker(const fs::path& log_dir) {
  std::error_code ec;
  if (!fs::exists(log_dir / kMetaProperties, ec)) {
    STRATA_RETURN_IF_ERROR(WriteText(log_dir / kNewLogDir, ""));
    return 0;
  }
  auto read = Env::Default()->ReadFile(log_dir / kNewLogDir);
  if (!read.ok() && read.error().code == Errc::kNotFound) return -1;
  if (!read.ok()) return read.take_error();
  const std::string text(read->begin(), read->end());
  if (text.empty()) return 0;
  try {
    size_t used = 0;
    const int64_t epoch = std::stoll(text, &used);
    if (used == text.size() && epoch > 0) return epoch;
  } catch (const std::exception&) {
  }
  return MakeError(Errc::kCorrupt, fmt::format("{}: '{}' is not a broker epoch",
                                               (log_dir / kNewLogDir).string(), text));
}

Status WriteNewLogDirMarker(const fs::path& log_dir, int64_t epoch) {
  return WriteText(log_dir / kNewLogDir, std::to_string(epoch));
}

Status ClearNewLogDirMarker(const fs::path& log_dir) {
  std::error_code ec;
  fs::remove(log_dir / kNewLogDir, ec);
  if (ec) {
    return MakeError(Errc::kIoError,
                     fmt::format("removing {}: {}", (log_dir / kNewLogDir).string(), ec.message()));
  }
  return Status::Ok();
}

Result<bool> TakeCleanShutdownMarker(const fs::path& log_dir) {
  std::error_code ec;
  if (!fs::exists(log_dir / kMetaProperties, ec)) return true;  // a new directory
  const bool clean = fs::exists(log_dir / kCleanShutdown, ec);
  if (clean && !fs::remove(log_dir / kCleanShutdown, ec)) {
    return MakeError(
        Errc::kIoError,
        fmt::format("removing {}: {}", (log_dir / kCleanShutdown).string(), ec.message()));
  }
  return clean;
}

Status MarkCleanShutdown(const fs::path& log_dir) {
  return WriteText(log_dir / kCleanShutdown, "");
}

Result<bool> ClaimPartitionDir(const fs::path& dir, const std::string& topic_id, Env* env) {
  const fs::path path = dir / kPartitionMetadata;
  bool emptied = false;
  auto read = env->ReadFile(path);
  if (read.ok()) {
    auto props = ParseLines(*read, ':');
    if (props["topic_id"] == topic_id) return false;
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (ec) {
      return MakeError(Errc::kIoError, fmt::format("removing {} (data of topic id {}): {}",
                                                   dir.string(), props["topic_id"], ec.message()));
    }
    emptied = true;
  } else if (read.error().code != Errc::kNotFound) {
    return read.take_error();
  }
  STRATA_RETURN_IF_ERROR(env->CreateDirs(dir));
  STRATA_RETURN_IF_ERROR(WriteText(path, fmt::format("version: 0\ntopic_id: {}\n", topic_id), env));
  return emptied;
}

std::vector<fs::path> StrayPartitionDirs(
    const fs::path& log_dir,
    const std::function<bool(const std::string& topic, int32_t partition)>& placed_here) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(log_dir, ec)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    const size_t dash = name.rfind('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == name.size() ||
        name.find_first_not_of("0123456789", dash + 1) != std::string::npos ||
        name.size() - dash > 10) {
      continue;
    }
    bool has_segment = false;
    for (const auto& file : fs::directory_iterator(entry.path(), ec)) {
      has_segment |= file.path().extension() == ".log";
    }
    if (!has_segment) continue;
    if (!placed_here(name.substr(0, dash), std::stoi(name.substr(dash + 1)))) {
      out.push_back(entry.path());
    }
  }
  return out;
}

}  // namespace strata::broker
