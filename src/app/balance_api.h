#pragma once
// `strata balance status|plan|pause|resume|apply`: the balancer's admin
// API (/v1/balancer) from the command line, as tables for people or JSON
// for scripts. Exit codes: 0 done; 1 the broker refused (for example, a
// plan asked of a broker that is not the active controller: the message
// names the controller); 2 the broker could not be reached.
#include <string>

namespace strata::app {

int RunBalanceApi(const std::string& command, const std::string& admin, bool json);

}  // namespace strata::app
