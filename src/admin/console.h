#pragma once
// The web console (GET / and /console on the admin listener): one HTML page
// with its script and styles, compiled into the binary from
// src/admin/console/index.html. It reads the admin API (/v1/cluster,
// /v1/topics, /v1/reassignments, /v1/balancer, /v1/groups) and refreshes
// itself every few seconds.
#include <string_view>

namespace strata::admin {

std::string_view ConsoleHtml();

}  // namespace strata::admin
