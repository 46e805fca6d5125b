#pragma once
// RunScaleHook: runs strata.balancer.scale.hook.command for one scale
// event, so that an outside system (an autoscaling group, a script) can add
// a machine when the cluster wants a standby broker or remove one that was
// drained back to standby. The command runs with /bin/sh -c, the broker's
// environment plus `env`, and its output goes where the broker's does; one
// still running after `timeout` is killed.
//
// Thread-safety: reentrant; blocks the calling thread (the balancer's)
// until the command ends.
#include <chrono>
#include <map>
#include <string>

#include "base/result.h"

namespace strata::balancer {

// OK when the command exited 0; otherwise why not (exit code, signal,
// timeout, could not start).
Status RunScaleHook(const std::string& command, const std::map<std::string, std::string>& env,
                    std::chrono::milliseconds timeout);

}  // namespace strata::balancer
