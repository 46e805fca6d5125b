#pragma once
// The loggers of src/cluster/: one per concern, so that an operator can tell
// metadata-view, controller and etcd-client lines apart.
#include "base/log.h"

namespace strata::cluster {

inline auto Log() { return log::Get("cluster"); }
inline auto MetadataLog() { return log::Get("metadata"); }
inline auto ControllerLog() { return log::Get("controller"); }
inline auto EtcdLog() { return log::Get("etcd"); }

}  // namespace strata::cluster
