#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "bench.h"
#include "client_config.h"

namespace strata::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Assigns every partition of the topic from the beginning (no group needed).
bool AssignAll(rd_kafka_t* rk, const std::string& topic) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, t, &md, 10000);
  rd_kafka_topic_destroy(t);
  if (err || md->topic_cnt != 1 || md->topics[0].err) {
    std::fprintf(stderr, "metadata for %s failed: %s\n", topic.c_str(),
                 rd_kafka_err2str(err ? err : md->topics[0].err));
    if (md) rd_kafka_metadata_destroy(md);
    return false;
  }
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(md->topics[0].partition_cnt);
  for (int i = 0; i < md->topics[0].partition_cnt; ++i) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), md->topics[0].partitions[i].id)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_metadata_destroy(md);
  err = rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  return err == RD_KAFKA_RESP_ERR_NO_ERROR;
}

}  // namespace

int RunConsume(const ConsumeOptions& o) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  bool ok = SetClientProperty(conf, "bootstrap.servers", o.bootstrap) &&
            SetClientProperty(conf, "group.id", "strata-bench") &&
            SetClientProperty(conf, "enable.auto.commit", "false") &&
            SetClientProperty(conf, "fetch.max.bytes", "52428800") &&
            SetClientProperty(conf, "queued.max.messages.kbytes", "262144") &&
            ApplyClientConfig(conf, o.command_config, o.sets);
  if (!ok) {
    rd_kafka_conf_destroy(conf);
    return 2;
  }
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) {
    std::fprintf(stderr, "consumer: %s\n", err);
    return 2;
  }
  rd_kafka_poll_set_consumer(rk);
  if (!AssignAll(rk, o.topic)) {
    rd_kafka_destroy(rk);
    return 1;
  }
  int64_t records = 0, bytes = 0;
  auto start = Clock::now();
  auto last_report = start;
  auto deadline = start + std::chrono::seconds(o.timeout_s);
  while (records < o.records && Clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (!m->err) {
      ++records;
      bytes += static_cast<int64_t>(m->len);
    } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      std::fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(m));
    }
    rd_kafka_message_destroy(m);
    if ((records & 4095) == 0 && Clock::now() - last_report >= std::chrono::seconds(1)) {
      last_report = Clock::now();
      std::fprintf(stderr, "  %lld/%lld consumed\n", static_cast<long long>(records),
                   static_cast<long long>(o.records));
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  double mb = static_cast<double>(bytes) / 1e6;
  std::printf("consume done: %lld records, %.1f MB in %.2f s: %.0f records/s, %.1f MB/s\n",
              static_cast<long long>(records), mb, seconds, static_cast<double>(records) / seconds,
              mb / seconds);
  if (!o.json_out.empty()) {
    std::ofstream out(o.json_out);
    out << "{\"records\":" << records << ",\"bytes\":" << bytes << ",\"seconds\":" << seconds
        << ",\"records_per_s\":" << static_cast<double>(records) / seconds
        << ",\"mb_per_s\":" << mb / seconds << "}\n";
  }
  return records >= o.records ? 0 : 1;
}

}  // namespace strata::bench
