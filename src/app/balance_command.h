#pragma once
// `strata balance ...`: the balancer's command line. `simulate` runs the
// real planner on a synthetic cluster (balancer/simulator.h) and prints
// plan time, moves, bytes to move and each goal's figures before and after.
#include <CLI/CLI.hpp>

namespace strata::app {

// Adds the subcommands to `app`; RunBalance runs the one parsed (true when
// one was: `*exit_code` is set).
void AddBalanceCommands(CLI::App& app);
bool RunBalance(int* exit_code);

}  // namespace strata::app
