#pragma once
// ProducerIdAllocator: hands out producer ids for InitProducerId from blocks
// reserved in the MetadataStore, so ids are unique across restarts without a
// durable write per producer. Thread-safe.
#include <cstdint>
#include <mutex>

#include "base/result.h"
#include "cluster/metadata_store.h"

namespace strata::kafka {

class ProducerIdAllocator {
 public:
  explicit ProducerIdAllocator(cluster::MetadataStore& store) : store_(store) {}

  Result<int64_t> Next() {
    std::lock_guard lock(mu_);
    if (next_ >= end_) {
      STRATA_ASSIGN_OR_RETURN(int64_t first, store_.AllocateProducerIds(kBlockSize));
      next_ = first;
      end_ = first + kBlockSize;
    }
    return next_++;
  }

 private:
  static constexpr int64_t kBlockSize = 1000;
  cluster::MetadataStore& store_;
  std::mutex mu_;
  int64_t next_ = 0;
  int64_t end_ = 0;
};

}  // namespace strata::kafka
