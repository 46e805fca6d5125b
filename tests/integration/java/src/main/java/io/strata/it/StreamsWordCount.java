package io.strata.it;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A Kafka Streams word count for Strata's exactly-once test (test_streams_eos.py): reads the
 * --input topic's records, keyed by word, counts them per key with groupByKey().count() into a
 * changelog-backed state store ("counts", changelog topic "APP-counts-changelog") and writes
 * every count update, the count as a decimal string, keyed by the word, to the --output topic.
 *
 * <p>processing.guarantee=exactly_once_v2, commit.interval.ms=100, internal topics with
 * replication.factor=3 and min.insync.replicas=2, and no record cache
 * (statestore.cache.max.bytes=0), so each input record gives exactly one update: a word seen n
 * times has the updates "1".."n" in the output, each once, if processing is exactly once.
 *
 * <p>Output, one line each: "STATE NEW_STATE" at every state change of the KafkaStreams client
 * ("STATE RUNNING" once it processes), "UNCAUGHT Class: message ..." for an exception that
 * killed a stream thread (the thread is replaced), and "CLOSED" (exit 0) once its standard
 * input has closed and streams.close() returned; "CLOSE_TIMED_OUT" (exit 1) if it did not
 * within 60 s.
 *
 * <p>Usage: StreamsWordCount --bootstrap HOST:PORT --application-id ID --input IN --output OUT
 * --state-dir DIR [--threads 2]
 */
public final class StreamsWordCount {
  public static void main(String[] args) throws Exception {
    Map<String, String> o = new HashMap<>(Map.of("threads", "2"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }

    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, o.get("application-id"));
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(StreamsConfig.STATE_DIR_CONFIG, o.get("state-dir"));
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, o.get("threads"));
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, "3");
    p.put(StreamsConfig.topicPrefix(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG), "2");
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
    // A JVM killed with -9 never leaves the group: its successor's rebalance waits out the dead
    // member's session, so keep that at the broker's minimum.
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "6000");
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "1000");

    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(o.get("input"), Consumed.with(Serdes.String(), Serdes.String()))
        .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
        .count(Materialized.as("counts"))
        .toStream()
        .mapValues(count -> Long.toString(count))
        .to(o.get("output"), Produced.with(Serdes.String(), Serdes.String()));

    KafkaStreams streams = new KafkaStreams(builder.build(), p);
    streams.setStateListener((now, before) -> say("STATE " + now));
    streams.setUncaughtExceptionHandler(e -> {
      say("UNCAUGHT " + TxnProducer.chain(e));
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
    });
    streams.start();

    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      while (in.readLine() != null) {
        // the test closes stdin to stop the application
      }
    }
    boolean closed = streams.close(Duration.ofSeconds(60));
    say(closed ? "CLOSED" : "CLOSE_TIMED_OUT");
    System.exit(closed ? 0 : 1);
  }

  static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }
}
