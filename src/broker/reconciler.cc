#include "broker/reconciler.h"

#include <chrono>

#include "broker/logger.h"

namespace strata::broker {

Reconciler::Reconciler(cluster::MetadataView& view, std::vector<std::string> prefixes, Pass pass)
    : signal_(view, std::move(prefixes)), pass_(std::move(pass)) {}

void Reconciler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Reconciler::Stop() {
  signal_.Stop();
  if (thread_.joinable()) thread_.join();
}

void Reconciler::Loop() {
  // The signal starts as changed: the first pass also covers whatever
  // changed between the owner's own first pass and the subscription.
  bool failed = false;
  for (;;) {
    const auto wake =
        signal_.WaitUntil(cluster::ViewChangeSignal::Clock::now() + std::chrono::seconds(1));
    if (wake.stopping) return;
    if (!wake.changed && !failed) continue;
    Status st = pass_();
    passes_++;
    failed = !st.ok();
    if (failed) {
      failed_passes_++;
      Log()->warn("reconciling replicas: {}", st.error().message);
    }
  }
}

}  // namespace strata::broker
