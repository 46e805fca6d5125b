#include "server/capacity.h"

#include <sched.h>

#include <filesystem>
#include <thread>

#include "cluster/records.h"

namespace strata::server {
namespace {

int64_t UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int64_t>(std::thread::hardware_concurrency());
}

int64_t LogDirBytes(const std::string& dir) {
  std::error_code ec;
  auto space = std::filesystem::space(dir, ec);
  return ec ? 0 : static_cast<int64_t>(space.capacity);
}

}  // namespace

std::map<std::string, int64_t> DeclaredCapacity(const config::BrokerConfig& config) {
  std::map<std::string, int64_t> out;
  auto put = [&](const char* dimension, int64_t value) {
    if (value > 0) out[dimension] = value;
  };
  put(cluster::kCapacityNetworkIn,
      config.GetLong("strata.broker.capacity.network.in.bytes.per.sec"));
  put(cluster::kCapacityNetworkOut,
      config.GetLong("strata.broker.capacity.network.out.bytes.per.sec"));
  int64_t disk = config.GetLong("strata.broker.capacity.disk.bytes");
  put(cluster::kCapacityDisk, disk > 0 ? disk : LogDirBytes(config.log_dir()));
  int64_t cores = config.GetLong("strata.broker.capacity.cpu.cores");
  put(cluster::kCapacityCpu, cores > 0 ? cores : UsableCores());
  return out;
}

}  // namespace strata::server
