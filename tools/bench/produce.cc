#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench.h"
#include "client_config.h"
#include "latency_histogram.h"

namespace strata::bench {

namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
      .count();
}

struct ProduceState {
  LatencyHistogram latency;
  int64_t delivered = 0;
  int64_t failed = 0;
  int64_t bytes = 0;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* state = static_cast<ProduceState*>(opaque);
  if (msg->err) {
    if (state->failed++ < 5)
      std::fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(msg->err));
    return;
  }
  state->delivered++;
  state->bytes += static_cast<int64_t>(msg->len);
  state->latency.Record(NowMicros() - reinterpret_cast<intptr_t>(msg->_private));
}

void WriteSummary(const ProduceOptions& o, const ProduceState& s, double seconds) {
  double mb = static_cast<double>(s.bytes) / 1e6;
  std::printf(
      "produce done: %lld records, %.1f MB in %.2f s: %.0f records/s, %.1f MB/s; latency p50 %.2f "
      "ms "
      "p99 %.2f ms p99.9 %.2f ms; failed %lld\n",
      static_cast<long long>(s.delivered), mb, seconds, static_cast<double>(s.delivered) / seconds,
      mb / seconds, s.latency.Percentile(0.5) / 1000, s.latency.Percentile(0.99) / 1000,
      s.latency.Percentile(0.999) / 1000, static_cast<long long>(s.failed));
  if (o.json_out.empty()) return;
  std::ofstream out(o.json_out);
  out << "{\"records\":" << s.delivered << ",\"bytes\":" << s.bytes << ",\"seconds\":" << seconds
      << ",\"records_per_s\":" << static_cast<double>(s.delivered) / seconds
      << ",\"mb_per_s\":" << mb / seconds << ",\"p50_ms\":" << s.latency.Percentile(0.5) / 1000
      << ",\"p99_ms\":" << s.latency.Percentile(0.99) / 1000
      << ",\"p999_ms\":" << s.latency.Percentile(0.999) / 1000 << ",\"failed\":" << s.failed
      << "}\n";
}

}  // namespace

int RunProduce(const ProduceOptions& o) {
  ProduceState state;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  bool ok = SetClientProperty(conf, "bootstrap.servers", o.bootstrap) &&
            SetClientProperty(conf, "acks", o.acks) &&
            SetClientProperty(conf, "compression.type", o.compression) &&
            SetClientProperty(conf, "linger.ms", std::to_string(o.linger_ms)) &&
            SetClientProperty(conf, "batch.size", std::to_string(o.batch_size)) &&
            SetClientProperty(conf, "queue.buffering.max.kbytes", "1048576") &&
            SetClientProperty(conf, "queue.buffering.max.messages", "1000000") &&
            ApplyClientConfig(conf, o.command_config, o.sets);
  if (!ok) {
    rd_kafka_conf_destroy(conf);
    return 2;
  }
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_conf_set_opaque(conf, &state);
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) {
    std::fprintf(stderr, "producer: %s\n", err);
    return 2;
  }
  std::vector<char> payload(static_cast<size_t>(o.record_size));
  std::mt19937 rng(42);
  for (auto& c : payload) c = static_cast<char>('a' + rng() % 26);  // compressible text

  auto start = Clock::now();
  auto last_report = start;
  int64_t last_delivered = 0;
  for (int64_t i = 0; i < o.records; ++i) {
    if (o.rate > 0) {
      auto due = start + std::chrono::microseconds(i * 1000000 / o.rate);
      while (Clock::now() < due) rd_kafka_poll(rk, 0), std::this_thread::yield();
    }
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(o.topic.c_str()), RD_KAFKA_V_VALUE(payload.data(), payload.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<intptr_t>(NowMicros()))),
          RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        std::fprintf(stderr, "produce: %s\n", rd_kafka_err2str(e));
        rd_kafka_destroy(rk);
        return 1;
      }
      rd_kafka_poll(rk, 10);
    }
    if ((i & 1023) == 0) {
      rd_kafka_poll(rk, 0);
      auto now = Clock::now();
      if (now - last_report >= std::chrono::seconds(1)) {
        double secs = std::chrono::duration<double>(now - last_report).count();
        std::fprintf(stderr, "  %lld/%lld delivered, %.0f records/s\n",
                     static_cast<long long>(state.delivered), static_cast<long long>(o.records),
                     static_cast<double>(state.delivered - last_delivered) / secs);
        last_report = now;
        last_delivered = state.delivered;
      }
    }
  }
  rd_kafka_flush(rk, 120000);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  rd_kafka_destroy(rk);
  WriteSummary(o, state, seconds);
  return state.failed == 0 && state.delivered == o.records ? 0 : 1;
}

}  // namespace strata::bench
