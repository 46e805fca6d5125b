// The broker and topic config tables (names and defaults as in Kafka 4.x).
#include <cstdlib>

#include "config/config_def.h"

namespace strata::config {

using T = ConfigType;

namespace {

// A share in [0, 1] (fault injection ratios).
std::function<std::optional<std::string>(const std::string&)> Ratio() {
  return [](const std::string& v) -> std::optional<std::string> {
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !(d >= 0 && d <= 1)) return "must be between 0 and 1";
    return std::nullopt;
  };
}

// Kafka's throttled-replicas list: empty, "*", or partition:broker pairs.
std::function<std::optional<std::string>(const std::string&)> ThrottledReplicas() {
  return [](const std::string& v) -> std::optional<std::string> {
    if (v.empty() || v == "*") return std::nullopt;
    size_t start = 0;
    while (start <= v.size()) {
      size_t end = v.find(',', start);
      std::string item =
          v.substr(start, end == std::string::npos ? std::string::npos : end - start);
      size_t colon = item.find(':');
      auto digits = [](const std::string& s) {
        return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      };
      if (colon == std::string::npos || !digits(item.substr(0, colon)) ||
          !digits(item.substr(colon + 1))) {
        return "must be * or a list of partition:broker, not '" + item + "'";
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return std::nullopt;
  };
}

// KIP-392's replica selector: none (consumers read from leaders) or Kafka's
// rack-aware one, the only one Strata implements.
std::function<std::optional<std::string>(const std::string&)> ReplicaSelectorClass() {
  return [](const std::string& v) -> std::optional<std::string> {
    if (v.empty() || v == "org.apache.kafka.common.replica.RackAwareReplicaSelector") {
      return std::nullopt;
    }
    return "'" + v +
           "' is not supported: leave it empty (consumers fetch from leaders) or set "
           "org.apache.kafka.common.replica.RackAwareReplicaSelector";
  };
}

}  // namespace

const std::vector<ConfigDef>& TopicConfigDefs() {
  static const std::vector<ConfigDef> defs = {
      {"cleanup.policy", T::kList, "delete", "delete and/or compact", ListOf({"delete", "compact"}),
       "log.cleanup.policy"},
      {"compression.type", T::kString, "producer", "codec of stored batches",
       OneOf({"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"}), "compression.type"},
      {"delete.retention.ms", T::kLong, "86400000", "tombstone retention", AtLeast(0),
       "log.cleaner.delete.retention.ms"},
      {"file.delete.delay.ms", T::kLong, "60000", "delay before deleting files", AtLeast(0),
       "log.segment.delete.delay.ms"},
      {"flush.messages", T::kLong, "9223372036854775807", "fsync every N records", AtLeast(1),
       "log.flush.interval.messages"},
      {"flush.ms", T::kLong, "9223372036854775807", "fsync every N ms", AtLeast(0),
       "log.flush.interval.ms"},
      {"index.interval.bytes", T::kInt, "4096", "bytes between offset index entries", AtLeast(0),
       "log.index.interval.bytes"},
      {"local.retention.bytes", T::kLong, "-2",
       "local bytes kept when tiered (-2: retention.bytes)", AtLeast(-2),
       "log.local.retention.bytes"},
      {"local.retention.ms", T::kLong, "-2", "local time kept when tiered (-2: retention.ms)",
       AtLeast(-2), "log.local.retention.ms"},
      {"max.compaction.lag.ms", T::kLong, "9223372036854775807",
       "max time a record stays uncompacted", AtLeast(1), "log.cleaner.max.compaction.lag.ms"},
      {"max.message.bytes", T::kInt, "1048588", "largest record batch", AtLeast(0),
       "message.max.bytes"},
      {"message.timestamp.after.max.ms", T::kLong, "3600000", "max future timestamp skew",
       AtLeast(0), "log.message.timestamp.after.max.ms"},
      {"message.timestamp.before.max.ms", T::kLong, "9223372036854775807",
       "max past timestamp skew", AtLeast(0), "log.message.timestamp.before.max.ms"},
      {"message.timestamp.type", T::kString, "CreateTime", "CreateTime or LogAppendTime",
       OneOf({"CreateTime", "LogAppendTime"}), "log.message.timestamp.type"},
      {"min.cleanable.dirty.ratio", T::kDouble, "0.5", "dirty ratio that triggers cleaning",
       nullptr, "log.cleaner.min.cleanable.ratio"},
      {"min.compaction.lag.ms", T::kLong, "0", "min time before a record may be compacted",
       AtLeast(0), "log.cleaner.min.compaction.lag.ms"},
      {"min.insync.replicas", T::kInt, "1", "replicas that must ack acks=all", AtLeast(1),
       "min.insync.replicas"},
      {"preallocate", T::kBoolean, "false", "preallocate segment files", nullptr,
       "log.preallocate"},
      {"remote.storage.enable", T::kBoolean, "false", "tier rolled segments to remote storage",
       nullptr, ""},
      {"retention.bytes", T::kLong, "-1", "max partition size before deleting old segments",
       nullptr, "log.retention.bytes"},
      {"retention.ms", T::kLong, "604800000", "max age before deleting old segments", AtLeast(-1),
       "log.retention.ms"},
      {"segment.bytes", T::kInt, "1073741824", "segment file size", AtLeast(14),
       "log.segment.bytes"},
      {"segment.index.bytes", T::kInt, "10485760", "offset index size limit", AtLeast(4),
       "log.index.size.max.bytes"},
      {"segment.jitter.ms", T::kLong, "0", "random jitter on segment.ms", AtLeast(0),
       "log.roll.jitter.ms"},
      {"segment.ms", T::kLong, "604800000", "roll a segment after this long", AtLeast(1),
       "log.roll.ms"},
      {"unclean.leader.election.enable", T::kBoolean, "false", "allow unclean leader election",
       nullptr, "unclean.leader.election.enable"},
      // kafka-reassign-partitions --throttle sets these (and clears them
      // with --verify); stored, not yet applied to replication traffic.
      {"leader.replication.throttled.replicas", T::kList, "",
       "replicas whose leader-side replication is throttled: partition:broker,... or *",
       ThrottledReplicas()},
      {"follower.replication.throttled.replicas", T::kList, "",
       "replicas whose follower-side replication is throttled: partition:broker,... or *",
       ThrottledReplicas()},
  };
  return defs;
}

const std::vector<ConfigDef>& BrokerConfigDefs() {
  static const std::vector<ConfigDef> defs = {
      {"node.id", T::kInt, "1", "this broker's id", AtLeast(0)},
      {"broker.rack", T::kString, "", "rack of this broker (rack-aware placement; empty: none)"},
      {"broker.id", T::kInt, "-1", "alias of node.id", AtLeast(-1)},
      {"max.request.partition.size.limit", T::kInt, "2000",
       "the most partitions one DescribeTopicPartitions response carries", AtLeast(1)},
      {"controller.socket.timeout.ms", T::kInt, "30000",
       "how long a request forwarded to the active controller may take, retries included",
       AtLeast(100)},
      {"listeners", T::kList, "PLAINTEXT://127.0.0.1:9092", "where the broker listens"},
      {"advertised.listeners", T::kList, "", "what clients are told (default: listeners)"},
      {"listener.security.protocol.map", T::kList,
       "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
       "each listener's security protocol (NAME:PROTOCOL)"},
      {"ssl.keystore.type", T::kString, "PEM",
       "PEM (key and certificate chain) or PKCS12; per listener as listener.name.<l>.ssl.*"},
      {"ssl.keystore.location", T::kString, "", "the keystore file"},
      {"ssl.keystore.password", T::kPassword, "", "the PKCS12 keystore's password"},
      {"ssl.keystore.key", T::kPassword, "", "the private key, inline PEM"},
      {"ssl.keystore.certificate.chain", T::kString, "", "the certificate chain, inline PEM"},
      {"ssl.key.password", T::kPassword, "", "the PEM private key's password"},
      {"ssl.truststore.type", T::kString, "PEM", "PEM or PKCS12"},
      {"ssl.truststore.location", T::kString, "", "the trusted CA certificates"},
      {"ssl.truststore.password", T::kPassword, "", "the PKCS12 truststore's password"},
      {"ssl.truststore.certificates", T::kString, "", "the trusted CA certificates, inline PEM"},
      {"ssl.client.auth", T::kString, "none",
       "none, requested or required: whether clients must present a certificate"},
      {"ssl.enabled.protocols", T::kList, "TLSv1.2,TLSv1.3", "TLS versions accepted"},
      {"ssl.cipher.suites", T::kList, "", "cipher suites (IANA names); empty: OpenSSL's defaults"},
      {"ssl.principal.mapping.rules", T::kString, "DEFAULT",
       "how a client certificate's distinguished name becomes its principal (RULE:.../DEFAULT)"},
      {"ssl.endpoint.identification.algorithm", T::kString, "https",
       "https: brokers check a peer's host name against its certificate; empty: they do not"},
      {"sasl.enabled.mechanisms", T::kList, "GSSAPI",
       "SASL mechanisms of the SASL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER "
       "(per listener as listener.name.<l>.sasl.enabled.mechanisms)"},
      {"sasl.mechanism.inter.broker.protocol", T::kString, "GSSAPI",
       "the mechanism brokers authenticate to each other with on a SASL inter-broker listener"},
      {"sasl.server.max.receive.size", T::kInt, "524288",
       "the largest request a connection may send before it has authenticated", AtLeast(8)},
      {"connections.max.reauth.ms", T::kLong, "0",
       "SASL sessions last at most this long before the client must re-authenticate (KIP-368); "
       "0: forever",
       AtLeast(0)},
      {"connections.max.idle.ms", T::kLong, "600000",
       "connections without a request for this long are closed (also those that never "
       "authenticate)",
       AtLeast(0)},
      {"sasl.oauthbearer.jwks.endpoint.url", T::kString, "",
       "where the keys that sign OAUTHBEARER tokens are: https://..., http://... or file://..."},
      {"sasl.oauthbearer.jwks.endpoint.refresh.ms", T::kLong, "3600000",
       "how often the JWKS is read again", AtLeast(1)},
      {"sasl.oauthbearer.expected.audience", T::kList, "",
       "audiences a token must name one of (empty: any)"},
      {"sasl.oauthbearer.expected.issuer", T::kString, "",
       "the issuer tokens must name (empty: any)"},
      {"sasl.oauthbearer.sub.claim.name", T::kString, "sub", "the claim naming the principal"},
      {"sasl.oauthbearer.scope.claim.name", T::kString, "scope", "the claim listing scopes"},
      {"sasl.oauthbearer.clock.skew.seconds", T::kInt, "30",
       "tolerance for the token's time claims", AtLeast(0)},
      {"authorizer.class.name", T::kString, "",
       "org.apache.kafka.metadata.authorizer.StandardAuthorizer to authorize every request "
       "with the ACLs (kafka-acls); empty: every request is allowed"},
      {"super.users", T::kString, "",
       "principals allowed everything, separated by ';' (User:admin;User:broker)"},
      {"allow.everyone.if.no.acl.found", T::kBoolean, "false",
       "allow an operation on a resource that has no ACL at all"},
      {"quota.window.num", T::kInt, "11", "samples a client's rate is measured over", AtLeast(1)},
      {"quota.window.size.seconds", T::kInt, "1", "length of each quota sample", AtLeast(1)},
      {"inter.broker.listener.name", T::kString, "",
       "the listener brokers reach each other on (default: the one named after "
       "security.inter.broker.protocol)"},
      {"security.inter.broker.protocol", T::kString, "PLAINTEXT",
       "names the inter-broker listener when inter.broker.listener.name is not set"},
      {"log.dirs", T::kList, "./data", "data directories (the first is used)"},
      {"log.dir", T::kString, "/tmp/kafka-logs", "data directory if log.dirs unset"},
      {"num.partitions", T::kInt, "1", "partitions of auto-created topics", AtLeast(1)},
      {"default.replication.factor", T::kShort, "1", "replication factor of auto-created topics",
       AtLeast(1)},
      {"auto.create.topics.enable", T::kBoolean, "true", "create topics on Metadata/Produce"},
      {"delete.topic.enable", T::kBoolean, "true", "allow DeleteTopics"},
      {"log.segment.bytes", T::kInt, "1073741824", "segment size", AtLeast(14)},
      {"log.roll.ms", T::kLong, "604800000", "segment age before rolling", AtLeast(1)},
      {"log.roll.hours", T::kInt, "168", "segment age before rolling (hours)", AtLeast(1)},
      {"log.roll.jitter.ms", T::kLong, "0", "jitter on log.roll.ms", AtLeast(0)},
      {"log.retention.ms", T::kLong, "604800000", "retention time", AtLeast(-1)},
      {"log.retention.minutes", T::kInt, "10080", "retention time (minutes)", AtLeast(-1)},
      {"log.retention.hours", T::kInt, "168", "retention time (hours)", AtLeast(-1)},
      {"log.retention.bytes", T::kLong, "-1", "retention size per partition"},
      {"log.retention.check.interval.ms", T::kLong, "300000", "retention check period", AtLeast(1)},
      {"log.index.interval.bytes", T::kInt, "4096", "bytes between index entries", AtLeast(0)},
      {"log.index.size.max.bytes", T::kInt, "10485760", "index size limit", AtLeast(4)},
      {"log.flush.interval.messages", T::kLong, "9223372036854775807", "fsync every N records",
       AtLeast(1)},
      {"log.flush.interval.ms", T::kLong, "9223372036854775807", "fsync every N ms", AtLeast(0)},
      {"log.cleanup.policy", T::kList, "delete", "default cleanup policy",
       ListOf({"delete", "compact"})},
      {"log.message.timestamp.type", T::kString, "CreateTime", "default timestamp type",
       OneOf({"CreateTime", "LogAppendTime"})},
      {"log.preallocate", T::kBoolean, "false", "preallocate segments"},
      {"log.segment.delete.delay.ms", T::kLong, "60000", "delay before deleting files", AtLeast(0)},
      {"log.cleaner.delete.retention.ms", T::kLong, "86400000", "tombstone retention", AtLeast(0)},
      {"log.cleaner.min.cleanable.ratio", T::kDouble, "0.5", "cleaner dirty ratio"},
      {"log.cleaner.min.compaction.lag.ms", T::kLong, "0", "compaction lag", AtLeast(0)},
      {"log.cleaner.max.compaction.lag.ms", T::kLong, "9223372036854775807", "max compaction lag",
       AtLeast(1)},
      {"log.message.timestamp.after.max.ms", T::kLong, "3600000", "future timestamp skew",
       AtLeast(0)},
      {"log.message.timestamp.before.max.ms", T::kLong, "9223372036854775807",
       "past timestamp skew", AtLeast(0)},
      {"log.local.retention.ms", T::kLong, "-2", "local retention when tiered", AtLeast(-2)},
      {"log.local.retention.bytes", T::kLong, "-2", "local retention bytes when tiered",
       AtLeast(-2)},
      {"message.max.bytes", T::kInt, "1048588", "largest record batch", AtLeast(0)},
      {"socket.request.max.bytes", T::kInt, "104857600", "largest request", AtLeast(1)},
      {"compression.type", T::kString, "producer", "default topic compression",
       OneOf({"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"})},
      {"min.insync.replicas", T::kInt, "1", "default min ISR", AtLeast(1)},
      // Dynamic (kafka-reassign-partitions --throttle); stored, not yet
      // applied to replication traffic.
      {"leader.replication.throttled.rate", T::kLong, "9223372036854775807",
       "bytes/s of throttled leader-side replication", AtLeast(0)},
      {"follower.replication.throttled.rate", T::kLong, "9223372036854775807",
       "bytes/s of throttled follower-side replication", AtLeast(0)},
      {"replica.alter.log.dirs.io.max.bytes.per.second", T::kLong, "9223372036854775807",
       "bytes/s of moves between log dirs", AtLeast(0)},
      {"unclean.leader.election.enable", T::kBoolean, "false", "default unclean election"},
      // Replication (Kafka's names and defaults).
      {"num.replica.fetchers", T::kInt, "1", "fetcher threads per source broker", AtLeast(1)},
      {"replica.fetch.max.bytes", T::kInt, "1048576", "bytes per partition per follower fetch",
       AtLeast(0)},
      {"replica.fetch.response.max.bytes", T::kInt, "10485760", "bytes per follower fetch response",
       AtLeast(0)},
      {"replica.fetch.min.bytes", T::kInt, "1", "bytes a follower fetch waits for", AtLeast(0)},
      {"replica.fetch.wait.max.ms", T::kInt, "500", "longest wait of a follower fetch", AtLeast(0)},
      {"replica.fetch.backoff.ms", T::kInt, "1000", "pause after a follower fetch error",
       AtLeast(0)},
      {"replica.socket.timeout.ms", T::kInt, "30000", "follower fetch request timeout", AtLeast(1)},
      {"request.timeout.ms", T::kInt, "30000",
       "how long a broker's own write for another broker (an end-transaction marker) may wait "
       "for the ISR",
       AtLeast(1)},
      {"replica.lag.time.max.ms", T::kLong, "30000",
       "a follower not caught up this long leaves the ISR", AtLeast(1)},
      {"replica.selector.class", T::kString, "",
       "KIP-392: which replica a consumer with client.rack is sent to (empty: the leader)",
       ReplicaSelectorClass()},
      // Active-segment sync of new replicas of tiered partitions.
      {"strata.replica.sync.enable", T::kBoolean, "true",
       "an empty replica of a tiered partition starts at its leader's active segment (false: "
       "as Kafka's follower, at the leader's local log start)"},
      {"strata.replica.sync.roll.enable", T::kBoolean, "true",
       "the leader rolls its active segment when a new replica asks where to start, so the "
       "replica copies almost nothing"},
      {"auto.leader.rebalance.enable", T::kBoolean, "true",
       "give leadership back to preferred replicas when a broker's share is off"},
      {"leader.imbalance.check.interval.seconds", T::kLong, "300",
       "period of the controller's leader-imbalance check", AtLeast(1)},
      {"leader.imbalance.per.broker.percentage", T::kInt, "10",
       "share of a broker's preferred partitions led elsewhere that triggers elections",
       AtLeast(0)},
      {"controlled.shutdown.enable", T::kBoolean, "true",
       "on SIGTERM, move leaderships to other replicas before stopping"},
      {"replica.high.watermark.checkpoint.interval.ms", T::kLong, "5000",
       "period of replication-offset-checkpoint writes", AtLeast(1)},
      {"num.network.threads", T::kInt, "2", "threads serving connections (strata: all I/O)",
       AtLeast(1)},
      {"num.io.threads", T::kInt, "2", "accepted for compatibility (strata uses one pool)",
       AtLeast(1)},
      {"offsets.topic.num.partitions", T::kInt, "50", "partitions of __consumer_offsets",
       AtLeast(1)},
      {"offsets.topic.replication.factor", T::kShort, "3",
       "replication of __consumer_offsets (capped at the brokers live at its creation)",
       AtLeast(1)},
      {"offsets.topic.segment.bytes", T::kInt, "104857600", "segment size of __consumer_offsets",
       AtLeast(1)},
      {"offsets.retention.minutes", T::kInt, "10080",
       "how long committed offsets of empty groups live", AtLeast(1)},
      {"offsets.retention.check.interval.ms", T::kLong, "600000", "offset expiry check period",
       AtLeast(1)},
      {"offsets.commit.timeout.ms", T::kInt, "5000", "offset commit write timeout", AtLeast(1)},
      {"transaction.state.log.num.partitions", T::kInt, "50", "partitions of __transaction_state",
       AtLeast(1)},
      {"transaction.state.log.replication.factor", T::kShort, "3",
       "replication of __transaction_state (capped at the brokers live at its creation)",
       AtLeast(1)},
      {"transaction.state.log.min.isr", T::kInt, "2",
       "min.insync.replicas of __transaction_state (capped at its replication factor)", AtLeast(1)},
      {"transaction.state.log.segment.bytes", T::kInt, "104857600",
       "segment size of __transaction_state", AtLeast(1)},
      {"transaction.max.timeout.ms", T::kInt, "900000",
       "largest transaction.timeout.ms a producer may ask for", AtLeast(1)},
      {"producer.id.expiration.ms", T::kInt, "86400000",
       "how long a partition keeps the state of a producer that wrote nothing since and has no "
       "open transaction (its idempotence sequence, epoch)",
       AtLeast(1)},
      {"producer.id.expiration.check.interval.ms", T::kInt, "600000",
       "how often partitions look for expired producers", AtLeast(1)},
      {"transactional.id.expiration.ms", T::kInt, "604800000",
       "how long a transactional id unused and without an open transaction lives", AtLeast(1)},
      {"strata.transaction.version", T::kShort, "2",
       "the transaction.version feature level clients are told is finalized (KIP-584): 2 is "
       "KIP-890 part 2 (the epoch bumps at every transaction end and partition leaders add "
       "partitions to transactions), 0 the classic protocol",
       OneOf({"0", "1", "2"})},
      {"transaction.partition.verification.enable", T::kBoolean, "true",
       "check with the transaction coordinator that a transactional produce belongs to an "
       "ongoing transaction before it opens one in a partition (KIP-890)"},
      {"add.partitions.to.txn.retry.backoff.ms", T::kInt, "20",
       "how soon a partition leader asks the transaction coordinator again when it answered "
       "CONCURRENT_TRANSACTIONS to a produce's verification",
       AtLeast(1)},
      {"add.partitions.to.txn.retry.backoff.max.ms", T::kInt, "100",
       "how long a partition leader keeps asking before the produce is answered "
       "NOT_ENOUGH_REPLICAS (the client retries)",
       AtLeast(0)},
      {"transaction.abort.timed.out.transaction.cleanup.interval.ms", T::kInt, "10000",
       "how often the coordinator aborts transactions open past their timeout", AtLeast(1)},
      {"transaction.remove.expired.transaction.cleanup.interval.ms", T::kInt, "3600000",
       "how often the coordinator removes expired transactional ids", AtLeast(1)},
      {"group.initial.rebalance.delay.ms", T::kInt, "3000",
       "wait for more members before the first rebalance of an empty group", AtLeast(0)},
      {"group.max.size", T::kInt, "2147483647", "max members per group", AtLeast(1)},
      {"group.min.session.timeout.ms", T::kInt, "6000", "min session timeout", AtLeast(0)},
      {"group.max.session.timeout.ms", T::kInt, "1800000", "max session timeout", AtLeast(0)},
      {"log.cleaner.enable", T::kBoolean, "true", "run the log cleaner for compacted topics"},
      {"log.cleaner.threads", T::kInt, "1", "cleaner threads", AtLeast(0)},
      {"log.cleaner.backoff.ms", T::kLong, "15000", "sleep when there is nothing to clean",
       AtLeast(0)},
      {"log.cleaner.dedupe.buffer.size", T::kLong, "134217728", "memory for the key map",
       AtLeast(1)},
      {"remote.log.storage.system.enable", T::kBoolean, "false",
       "enable tiered storage (KIP-405) on this broker"},
      {"remote.log.manager.copier.thread.pool.size", T::kInt, "2",
       "threads uploading segments to remote storage", AtLeast(1)},
      {"remote.log.manager.copy.max.bytes.per.second", T::kLong, "9223372036854775807",
       "cap on the broker's upload rate to remote storage (averaged over the quota windows)",
       AtLeast(1)},
      {"remote.log.manager.copy.quota.window.num", T::kInt, "11",
       "windows the upload rate is averaged over", AtLeast(1)},
      {"remote.log.manager.copy.quota.window.size.seconds", T::kInt, "1",
       "length of one upload quota window", AtLeast(1)},
      {"remote.log.manager.task.interval.ms", T::kLong, "30000",
       "period of remote retention (expiry of remote segments)", AtLeast(1)},
      {"remote.log.reader.threads", T::kInt, "10", "threads serving fetches from remote storage",
       AtLeast(1)},
      {"strata.remote.storage.uri", T::kString, "",
       "remote tier: file:///abs/dir, webhdfs://host:port/dir or s3://bucket/prefix"},
      {"strata.remote.storage.user", T::kString, "", "WebHDFS user.name (empty: process user)"},
      {"strata.remote.s3.endpoint", T::kString, "",
       "S3 endpoint, http(s)://host[:port] (empty: https://s3.<region>.amazonaws.com)"},
      {"strata.remote.s3.region", T::kString, "us-east-1", "S3 region requests are signed for"},
      {"strata.remote.s3.path.style.access", T::kBoolean, "false",
       "S3 path-style URLs (endpoint/bucket/key) instead of virtual-hosted (bucket.endpoint/key)"},
      {"strata.remote.s3.access.key.id", T::kString, "",
       "S3 access key (empty: AWS_ACCESS_KEY_ID, then the AWS_PROFILE of the credentials file)"},
      {"strata.remote.s3.secret.access.key", T::kPassword, "",
       "S3 secret key, with strata.remote.s3.access.key.id"},
      {"strata.remote.s3.multipart.threshold.bytes", T::kLong, "67108864",
       "S3 uploads larger than this go multipart", AtLeast(5 << 20)},
      {"strata.remote.s3.multipart.part.bytes", T::kLong, "16777216",
       "size of the parts of an S3 multipart upload", AtLeast(5 << 20)},
      {"strata.remote.s3.upload.parallelism", T::kInt, "4",
       "parts of one S3 multipart upload sent at once", AtLeast(1)},
      {"strata.remote.s3.multipart.orphan.age.ms", T::kLong, "3600000",
       "S3 multipart uploads under the prefix older than this are aborted (a dead broker's)",
       AtLeast(0)},
      {"strata.remote.upload.parallel.lag.segments", T::kInt, "4",
       "pending segments of one partition above which they upload in parallel", AtLeast(1)},
      {"strata.remote.cache.bytes", T::kLong, "1073741824",
       "bound of the on-disk cache of remote segment chunks (0: no cache)", AtLeast(0)},
      {"strata.remote.cache.chunk.bytes", T::kLong, "4194304",
       "size of the chunks remote segments are cached and read ahead in", AtLeast(4096)},
      {"strata.remote.cache.readahead.chunks", T::kInt, "2",
       "chunks fetched ahead of each remote read", AtLeast(0)},
      {"strata.remote.fetch.max.bytes", T::kLong, "134217728",
       "bytes of remote reads in flight at once; fetches beyond it wait", AtLeast(1)},
      {"strata.remote.cache.dir", T::kString, "",
       "directory of the remote chunk cache (empty: <first log dir>/.remote-cache)"},
      {"strata.admin.listener", T::kString, "", "host:port of the HTTP admin API (empty: off)"},
      {"strata.admin.ssl.keystore.location", T::kString, "",
       "the admin API's key and certificate chain (PEM): set to serve HTTPS"},
      {"strata.admin.ssl.keystore.type", T::kString, "PEM", "PEM or PKCS12"},
      {"strata.admin.ssl.keystore.password", T::kPassword, "", "the PKCS12 keystore's password"},
      {"strata.admin.ssl.key.password", T::kPassword, "", "the PEM private key's password"},
      {"strata.admin.ssl.truststore.location", T::kString, "",
       "CAs the admin API's client certificates must chain to"},
      {"strata.admin.ssl.client.auth", T::kString, "none",
       "none, requested or required: client certificates on the admin API"},
      {"strata.admin.token.file", T::kString, "",
       "bearer tokens of the admin API, one '<token> admin|read' per line (empty: none)"},
      {"strata.admin.admin.principals", T::kList, "",
       "client certificate principals (User:CN=...) with the admin role; other trusted "
       "certificates may read"},
      {"strata.log.level", T::kString, "info", "log level",
       OneOf({"trace", "debug", "info", "warn", "error", "off"})},
      // Cluster metadata (Strata keeps it in etcd where Kafka uses KRaft).
      {"strata.metadata.backend", T::kString, "embedded",
       "where cluster metadata lives: embedded (one broker, in log.dirs) or etcd",
       OneOf({"embedded", "etcd"})},
      {"strata.etcd.endpoints", T::kString, "",
       "etcd members as host:port,host:port (strata.metadata.backend=etcd)"},
      {"strata.etcd.tls.ca.location", T::kString, "",
       "PEM CAs etcd's certificate must chain to: set to reach etcd over TLS"},
      {"strata.etcd.tls.cert.location", T::kString, "",
       "PEM client certificate for etcd's --client-cert-auth"},
      {"strata.etcd.tls.key.location", T::kString, "", "the client certificate's PEM key"},
      {"strata.etcd.user", T::kString, "", "etcd user (etcd's authentication); empty: none"},
      {"strata.etcd.password", T::kPassword, "", "the etcd user's password"},
      {"strata.etcd.prefix", T::kString, "/strata",
       "key prefix of this cluster's metadata in etcd (several clusters may share one etcd)"},
      {"strata.etcd.lease.ttl.ms", T::kLong, "3000",
       "TTL of the broker's etcd lease: a broker silent this long is fenced (whole seconds)",
       AtLeast(2000)},
      {"strata.etcd.request.timeout.ms", T::kLong, "5000", "deadline of one etcd call",
       AtLeast(100)},
      {"strata.broker.liveness.probe.enable", T::kBoolean, "true",
       "when a fetch from a leader fails, probe the leader's listener and revoke its lease if "
       "connections are refused twice (its process is gone), instead of waiting for the lease "
       "TTL"},
      {"strata.broker.standby", T::kBoolean, "false",
       "register as a standby broker: known to the cluster, but no replicas are placed on it "
       "until it is activated"},
      {"strata.broker.capacity.network.in.bytes.per.sec", T::kLong, "0",
       "declared inbound network capacity, for the balancer (0: not declared)", AtLeast(0)},
      {"strata.broker.capacity.network.out.bytes.per.sec", T::kLong, "0",
       "declared outbound network capacity, for the balancer (0: not declared)", AtLeast(0)},
      {"strata.broker.capacity.disk.bytes", T::kLong, "0",
       "declared local disk capacity, for the balancer (0: the size of the log.dirs file system)",
       AtLeast(0)},
      {"strata.broker.capacity.cpu.cores", T::kLong, "0",
       "declared CPU cores, for the balancer (0: the cores this process may use)", AtLeast(0)},
      // The autobalancer (docs/balancer.md), run by the active controller.
      {"strata.balancer.enable", T::kBoolean, "true",
       "plan and carry out moves every strata.balancer.cycle.interval.ms (an operator's "
       "apply runs a cycle either way); dynamic, cluster-wide with kafka-configs "
       "--entity-default"},
      {"strata.balancer.self.healing.enable", T::kBoolean, "true",
       "re-place the replicas of a broker gone past its failure timeout, also while "
       "strata.balancer.enable is false (then with the hard goals only); dynamic, "
       "cluster-wide with kafka-configs --entity-default"},
      {"strata.balancer.paused", T::kBoolean, "false",
       "no moves are carried out (plans are still made); set cluster-wide by the admin API's "
       "pause and resume, or with kafka-configs --entity-type brokers --entity-default"},
      {"strata.balancer.cycle.interval.ms", T::kLong, "60000", "time between balancing cycles",
       AtLeast(100)},
      {"strata.balancer.goals", T::kList,
       "network_in,network_out,leader_count,leader_bytes_in,topic_replica_spread",
       "soft goals in priority order"},
      {"strata.balancer.balance.deviation", T::kDouble, "0.1",
       "brokers within the average +- this share are balanced; one outside triggers a goal, "
       "which then brings brokers within half of it",
       Ratio()},
      {"strata.balancer.traffic.floor.bytes.per.sec", T::kLong, "1048576",
       "network goals move nothing while the per-broker average is below this", AtLeast(0)},
      {"strata.balancer.max.moves.per.cycle", T::kInt, "50",
       "partitions one cycle may move (moves off dead or draining brokers are not capped)",
       AtLeast(1)},
      {"strata.balancer.partition.cooldown.ms", T::kLong, "600000",
       "a partition moved by the balancer is not moved again for this long", AtLeast(0)},
      {"strata.balancer.max.replicas.per.broker", T::kInt, "10000",
       "hard cap on replicas per broker", AtLeast(1)},
      {"strata.balancer.disk.cap.ratio", T::kDouble, "0.8",
       "hard cap on a broker's local log size, as a share of its declared disk capacity", Ratio()},
      {"strata.balancer.execution.concurrency", T::kInt, "50",
       "moves in flight at once per live broker", AtLeast(1)},
      {"strata.balancer.replication.throttle.bytes.per.sec", T::kLong, "0",
       "replication throttle of the balancer's moves, set as kafka-reassign-partitions "
       "--throttle sets one (0: none)",
       AtLeast(0)},
      {"strata.balancer.move.timeout.ms", T::kLong, "300000",
       "a move not done within this is cancelled (its original replicas come back)", AtLeast(1000)},
      {"strata.balancer.broker.failure.timeout.ms", T::kLong, "60000",
       "a broker that vanished (its lease expired or was revoked by the liveness probe) and "
       "stayed gone this long is declared dead and its replicas re-placed",
       AtLeast(0)},
      {"strata.balancer.broker.shutdown.grace.ms", T::kLong, "600000",
       "the same for a broker that left by a clean shutdown and is expected back (a rolling "
       "restart); the longer of the two applies",
       AtLeast(0)},
      {"strata.balancer.max.failed.brokers", T::kInt, "1",
       "with more brokers gone past the failure timeout, none is re-placed", AtLeast(0)},
      {"strata.balancer.metrics.interval.ms", T::kLong, "10000",
       "how often every broker publishes its load to __strata_metrics (0: never)", AtLeast(0)},
      {"strata.balancer.metrics.topic.partitions", T::kInt, "1",
       "partitions of __strata_metrics when the controller creates it", AtLeast(1)},
      {"strata.balancer.metrics.retention.ms", T::kLong, "1800000",
       "retention.ms of __strata_metrics when the controller creates it", AtLeast(1)},
      {"strata.balancer.log.retention.ms", T::kLong, "604800000",
       "retention.ms of __strata_balancer_log when the controller creates it", AtLeast(1)},
      {"strata.balancer.metrics.stale.ms", T::kLong, "60000",
       "a broker whose last load sample is older than this is left out of planning", AtLeast(1000)},
      {"strata.balancer.metrics.window.samples", T::kInt, "6",
       "load samples per broker averaged into the model", AtLeast(1)},
      // Scaling onto standby brokers and back (docs/balancer.md "Scaling").
      {"strata.balancer.scaling.enable", T::kBoolean, "false",
       "activate standby brokers when load stays above strata.balancer.scale.out.threshold and "
       "drain one back to standby when it stays below strata.balancer.scale.in.threshold"},
      {"strata.balancer.scale.out.threshold", T::kDouble, "0.8",
       "share of the active brokers' declared capacity (the most used of network in, network "
       "out, CPU and disk) above which the cluster scales out",
       Ratio()},
      {"strata.balancer.scale.in.threshold", T::kDouble, "0.3",
       "share of declared capacity below which one broker is drained back to standby", Ratio()},
      {"strata.balancer.scale.sustain.ms", T::kLong, "300000",
       "how long utilization must stay past a threshold before the cluster scales", AtLeast(0)},
      {"strata.balancer.scale.min.active.brokers", T::kInt, "3",
       "scale-in never leaves fewer active brokers (nor fewer than the largest replication "
       "factor)",
       AtLeast(1)},
      {"strata.balancer.scale.hook.command", T::kString, "",
       "run with /bin/sh -c on every scale event, with STRATA_SCALE_EVENT (scale_out, "
       "standby_wanted, drain_started, drain_canceled, scale_in), STRATA_SCALE_BROKER, "
       "STRATA_SCALE_UTILIZATION and STRATA_SCALE_REASON in its environment"},
      {"strata.balancer.scale.hook.timeout.ms", T::kLong, "30000",
       "a hook command still running after this is killed", AtLeast(100)},
      {"strata.balancer.scaling.activated", T::kList, "",
       "standby brokers scaling activated (kept by the controller cluster-wide)"},
      {"strata.balancer.scaling.draining", T::kList, "",
       "brokers scaling is draining back to standby (kept by the controller cluster-wide)"},
      {"strata.balancer.scaling.retired", T::kList, "",
       "active brokers scaling drained to standby (kept by the controller cluster-wide)"},
      // Remote storage resilience (strata names: Kafka has none for these).
      {"strata.remote.retry.max.attempts", T::kInt, "6",
       "attempts per remote storage call on retriable errors", AtLeast(1)},
      {"strata.remote.retry.backoff.ms", T::kLong, "100",
       "first retry backoff of a remote call (doubles, full jitter)", AtLeast(0)},
      {"strata.remote.retry.backoff.max.ms", T::kLong, "5000", "cap of the remote retry backoff",
       AtLeast(0)},
      {"strata.remote.call.timeout.ms", T::kLong, "120000",
       "deadline of one remote call including its retries", AtLeast(1)},
      {"strata.remote.attempt.timeout.ms", T::kLong, "30000",
       "deadline of one attempt of a remote call (0: the call's remaining time)", AtLeast(0)},
      {"strata.remote.hedge.delay.ms", T::kLong, "200",
       "start a second remote read when the first has not answered after this long (0: no "
       "hedging)",
       AtLeast(0)},
      {"strata.remote.hedge.max.ratio", T::kDouble, "0.1",
       "cap on hedged reads as a share of all remote reads", Ratio()},
      {"strata.remote.breaker.failure.threshold", T::kInt, "5",
       "consecutive failed remote calls that open the circuit breaker", AtLeast(1)},
      {"strata.remote.breaker.open.ms", T::kLong, "5000",
       "how long an open breaker fails remote calls fast before a probe", AtLeast(1)},
      // Test-only fault injection over the remote backend (0 = off).
      {"strata.remote.fault.get.delay.ratio", T::kDouble, "0",
       "TEST ONLY: share of remote reads delayed by strata.remote.fault.get.delay.ms", Ratio()},
      {"strata.remote.fault.get.delay.ms", T::kLong, "0",
       "TEST ONLY: delay of a delayed remote read", AtLeast(0)},
      {"strata.remote.fault.put.fail.ratio", T::kDouble, "0",
       "TEST ONLY: share of remote writes failing (retriable, nothing written)", Ratio()},
      {"strata.remote.fault.seed", T::kLong, "1", "TEST ONLY: seed of the fault injection",
       nullptr},
      // Produce back-pressure on local disk usage.
      {"strata.log.dir.high.mark.bytes", T::kLong, "0",
       "refuse produce (KAFKA_STORAGE_ERROR) while partition logs hold more bytes (0: off)",
       AtLeast(0)},
      {"strata.log.dir.high.mark.percent", T::kInt, "95",
       "refuse produce while the log dir's filesystem is fuller than this percent (0: off)",
       AtLeast(0)},
  };
  return defs;
}

}  // namespace strata::config
