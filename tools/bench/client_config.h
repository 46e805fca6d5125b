#pragma once
// librdkafka client properties from the command line of `strata bench produce|consume`
// (--command-config FILE, --set key=value), e.g. the security settings to reach a SASL_SSL
// listener (bench/security.py).
#include <librdkafka/rdkafka.h>

#include <string>
#include <vector>

namespace strata::bench {

// Sets one librdkafka property. When librdkafka rejects it, prints
// `config key=value: <librdkafka error>` to stderr (the value masked when the key contains
// "password") and returns false.
bool SetClientProperty(rd_kafka_conf_t* conf, const std::string& key, const std::string& value);

// Applies, on top of the defaults already in `conf`, the properties of `command_config` (if not
// empty: `key=value` lines, `#`/`!` comments and blank lines skipped, as in Kafka's
// --command-config files) and then each `key=value` of `sets`, so that later ones override
// earlier ones. Returns false (after printing why) on an unreadable file, a line or --set
// without `=`, or a property librdkafka rejects.
bool ApplyClientConfig(rd_kafka_conf_t* conf, const std::string& command_config,
                       const std::vector<std::string>& sets);

}  // namespace strata::bench
