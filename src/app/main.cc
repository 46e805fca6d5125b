// strata: the broker binary. `strata serve --config server.properties
// [--set key=value ...]` runs one broker until SIGINT/SIGTERM; `strata
// topic|group|txn|cluster|partition|tier|balance ...` are the operator's CLI.
#include <signal.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "app/balance_command.h"
#include "app/cli.h"
#include "base/log.h"
#include "bench/bench.h"
#include "config/broker_config.h"
#include "config/properties.h"
#include "server/broker.h"

namespace {

// Every partition holds three files open (log, offset and time index): raise
// the soft descriptor limit to the hard one, as a broker with many
// partitions needs, and say what it is.
void RaiseFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  getrlimit(RLIMIT_NOFILE, &lim);
  strata::log::Get("main")->info("open file limit {} (about {} partitions at 3 files each)",
                                 lim.rlim_cur, lim.rlim_cur / 3);
}

int Serve(const std::string& config_path, const std::vector<std::string>& sets) {
  using namespace strata;
  config::Properties props;
  std::vector<std::string> unknown;
  std::unique_ptr<server::Broker> broker;
  try {
    if (!config_path.empty()) props = config::LoadPropertiesFile(config_path);
    for (const auto& s : sets) {
      auto [k, v] = config::ParseAssignment(s);
      props[k] = v;
    }
    auto cfg = config::BrokerConfig::FromProperties(props, &unknown);
    log::SetLevel(cfg.Get("strata.log.level"));
    broker = std::make_unique<server::Broker>(std::move(cfg));
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "strata: configuration error: %s\n", e.what());
    return 2;
  }
  for (const auto& k : unknown) log::Get("config")->warn("unknown config key '{}' ignored", k);
  RaiseFileLimit();

  // Signals are taken synchronously by this thread; broker threads never see them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  Status st = broker->Start();
  if (!st.ok()) {
    log::Get("main")->error("start-up failed: {}", st.error().message);
    return 1;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  log::Get("main")->info("signal {} received, shutting down", sig);
  broker->ControlledShutdown();
  broker->Stop();
  broker.reset();  // joins threads, closes logs cleanly
  log::Get("main")->info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Strata: a Kafka-compatible broker with tiered storage"};
  app.require_subcommand(1);

  std::string config_path;
  std::vector<std::string> sets;
  auto* serve = app.add_subcommand("serve", "run a broker");
  serve->add_option("--config,-c", config_path, "server.properties file");
  serve->add_option("--set", sets, "override a config key: key=value (repeatable)");

  auto* version = app.add_subcommand("version", "print the version");

  auto* bench = app.add_subcommand("bench", "load generator (librdkafka)");
  bench->require_subcommand(1);
  strata::bench::ProduceOptions po;
  auto* bp = bench->add_subcommand("produce", "produce records as fast as possible or at --rate");
  bp->add_option("--bootstrap", po.bootstrap);
  bp->add_option("--topic", po.topic);
  bp->add_option("--records", po.records);
  bp->add_option("--record-size", po.record_size);
  bp->add_option("--acks", po.acks);
  bp->add_option("--compression", po.compression);
  bp->add_option("--rate", po.rate, "records per second (0 = unthrottled)");
  bp->add_option("--linger-ms", po.linger_ms);
  bp->add_option("--json", po.json_out, "write the summary as JSON to this file");
  bp->add_option("--command-config", po.command_config,
                 "librdkafka properties file (key=value lines), applied after the defaults");
  bp->add_option("--set", po.sets,
                 "a librdkafka property key=value, applied after --command-config (repeatable)");
  strata::bench::ConsumeOptions co;
  auto* bc = bench->add_subcommand("consume", "consume a topic from the beginning");
  bc->add_option("--bootstrap", co.bootstrap);
  bc->add_option("--topic", co.topic);
  bc->add_option("--records", co.records);
  bc->add_option("--timeout", co.timeout_s);
  bc->add_option("--json", co.json_out);
  bc->add_option("--command-config", co.command_config,
                 "librdkafka properties file (key=value lines), applied after the defaults");
  bc->add_option("--set", co.sets,
                 "a librdkafka property key=value, applied after --command-config (repeatable)");

  strata::bench::MetadataScaleOptions mo;
  auto* bm =
      bench->add_subcommand("metadata", "cluster metadata at scale against etcd (no brokers)");
  bm->add_option("--etcd", mo.etcd, "etcd endpoints host:port,...");
  bm->add_option("--prefix", mo.prefix);
  bm->add_option("--brokers", mo.brokers);
  bm->add_option("--topics", mo.topics);
  bm->add_option("--partitions", mo.partitions);
  bm->add_option("--json", mo.json_out);

  strata::app::AddBalanceCommands(app);
  auto cli_flags = std::make_shared<strata::app::CommonFlags>();
  strata::app::Commands commands;
  strata::app::AddTopicCommands(app, cli_flags, commands);
  strata::app::AddGroupCommands(app, cli_flags, commands);
  strata::app::AddTxnCommands(app, cli_flags, commands);
  strata::app::AddClusterCommands(app, cli_flags, commands);
  strata::app::AddPartitionCommands(app, cli_flags, commands);
  strata::app::AddTierCommands(app, cli_flags, commands);

  CLI11_PARSE(app, argc, argv);
  int exit_code = 0;
  if (strata::app::RunBalance(&exit_code)) return exit_code;
  for (const auto& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  if (version->parsed()) {
    std::cout << "strata 0.1.0\n";
    return 0;
  }
  if (bp->parsed()) return strata::bench::RunProduce(po);
  if (bc->parsed()) return strata::bench::RunConsume(co);
  if (bm->parsed()) return strata::bench::RunMetadataScale(mo);
  return Serve(config_path, sets);
}
