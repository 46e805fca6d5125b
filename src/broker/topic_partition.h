#pragma once
// The broker names partitions with the project-wide TopicPartition.
#include "base/topic_partition.h"

namespace strata::broker {

using strata::TopicPartition;
using strata::TopicPartitionHash;

}  // namespace strata::broker
