#include "tiered/remote_stack.h"

#include <memory>

#include "base/log.h"
#include "tiered/fault_injecting_storage.h"
#include "tiered/remote_log_manager.h"

namespace strata::tiered {

Result<ResilientStorage> OpenRemoteStack(const std::string& uri, RemoteStackOptions options) {
  STRATA_ASSIGN_OR_RETURN(auto backend, OpenRemoteStorage(uri, options.storage));
  const RemoteFaultOptions& f = options.faults;
  if (f.enabled()) {
    auto faulty = std::make_unique<FaultInjectingStorage>(std::move(backend), f.seed);
    FaultSpec get;
    get.delay_ratio = f.get_delay_ratio;
    get.delay = f.get_delay;
    faulty->SetFault(StorageOp::kGet, get);
    FaultSpec put;
    put.fail_ratio = f.put_fail_ratio;
    put.fail_code = Errc::kUnavailable;
    faulty->SetFault(StorageOp::kPut, put);
    log::Get("tiered")->warn(
        "remote storage FAULT INJECTION is on (test only): {:.3f} of gets delayed {} ms, {:.3f} "
        "of puts fail",
        f.get_delay_ratio, f.get_delay.count(), f.put_fail_ratio);
    backend = std::move(faulty);
  }
  return MakeResilientStorage(std::move(backend), std::move(options.resilience));
}

Result<std::unique_ptr<RemoteLogManager>> RemoteLogManager::Open(const std::string& uri,
                                                                 RemoteLogManagerOptions options,
                                                                 RemoteStackOptions stack,
                                                                 Clock* clock) {
  STRATA_ASSIGN_OR_RETURN(ResilientStorage layers, OpenRemoteStack(uri, std::move(stack)));
  options.store_uri = uri;
  return std::make_unique<RemoteLogManager>(options, std::move(layers), clock);
}

}  // namespace strata::tiered
