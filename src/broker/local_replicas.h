#pragma once
// What the broker's log directory says about whose data it holds, checked
// against cluster metadata so that data is never served, or deleted, for the
// wrong cluster or the wrong topic:
// - meta.properties (Kafka's file): the cluster id and node id the directory
//   belongs to. A broker started on another cluster's data (a changed
//   strata.etcd.prefix or endpoints, a copied directory) refuses to start.
// - .strata_clean_shutdown: the broker's last run ended in a clean shutdown
//   (its logs closed and flushed), which the controller needs to keep it an
//   eligible leader replica (KIP-966).
// - .strata_new_log_dir: the directory was new (no meta.properties) when a
//   run began, at the broker epoch it holds, and partition records older
//   than that may still count on data this broker never had.
// - partition.metadata in each partition directory (Kafka's file): the topic
//   id of the data. A directory left by a topic that was deleted while this
//   broker was down, whose name a new topic now has, is the old topic's.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/result.h"

namespace strata::broker {

// Writes <log dir>/meta.properties at first start; later starts must match.
Status CheckMetaProperties(const std::filesystem::path& log_dir, const std::string& cluster_id,
                           int32_t node_id);

// The broker epoch at which the log directory was new
// (BrokerRegistration::new_log_dir_epoch): 0 when it is new now (no
// meta.properties yet: call before CheckMetaProperties, which writes it) or
// a run that found it new ended before registering; the epoch an earlier
// run registered at; -1 when it is not new. A new directory is marked at
// once, so a crash before the controller acts leaves it marked.
Result<int64_t> ReadNewLogDirMarker(const std::filesystem::path& log_dir);
// Records the epoch of the first registration with the new directory.
Status WriteNewLogDirMarker(const std::filesystem::path& log_dir, int64_t epoch);
// Once no partition record counts on data from before that epoch.
Status ClearNewLogDirMarker(const std::filesystem::path& log_dir);

// Whether the previous run shut down cleanly (the marker is there, or the
// directory is new: no meta.properties yet); removes the marker, so a crash
// of this run is not taken for a clean stop.
Result<bool> TakeCleanShutdownMarker(const std::filesystem::path& log_dir);
// Marks a clean shutdown; call once every log is closed.
Status MarkCleanShutdown(const std::filesystem::path& log_dir);

// Makes `dir` the home of topic `topic_id`'s partition: a directory holding
// another topic id's data is emptied first (and true returned), a new or
// unmarked one is marked.
Result<bool> ClaimPartitionDir(const std::filesystem::path& dir, const std::string& topic_id,
                               Env* env = Env::Default());

// Partition directories under `log_dir` ("<topic>-<n>" with a segment file)
// for which `placed_here(topic, partition)` is false.
std::vector<std::filesystem::path> StrayPartitionDirs(
    const std::filesystem::path& log_dir,
    const std::function<bool(const std::string& topic, int32_t partition)>& placed_here);

}  // namespace strata::broker
