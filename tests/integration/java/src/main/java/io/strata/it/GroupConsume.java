package io.strata.it;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A Java consumer-group member for Strata's consumer-group tests: subscribes to one topic in
 * a group with the given partition assignors (classic rebalance protocol), commits what it
 * consumed synchronously (before partitions are revoked and on exit), and reports on stdout:
 *
 * <pre>
 *   OWNED p,p,...        after every rebalance callback (its whole current assignment)
 *   M p offset           for each record consumed
 *   CLOSED               after the final commit and LeaveGroup
 *   NOTE ...             informational (e.g. a commit refused during a rebalance)
 * </pre>
 *
 * <p>Usage: GroupConsume --bootstrap HOST:PORT --group G --topic T [--assignors
 * range|cooperative-sticky|range,cooperative-sticky] [--session-ms 6000] [--protocol
 * classic|consumer] [--remote-assignor uniform|range] [--instance-id ID] [--pattern RE2]. With
 * --protocol consumer (KIP-848) the broker assigns and times sessions out, so the assignors
 * and the session timeout are not the client's to set; --pattern subscribes by a regular
 * expression the broker matches (KIP-848), and each record is then reported as "MT topic p
 * offset". It runs until a line "stop" (or EOF) arrives on stdin.
 */
public final class GroupConsume {
  private static final Map<String, String> ASSIGNORS = Map.of(
      "range", "org.apache.kafka.clients.consumer.RangeAssignor",
      "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
      "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new HashMap<>();
    opts.put("assignors", "range");
    opts.put("session-ms", "6000");
    opts.put("protocol", "classic");
    for (int i = 0; i + 1 < args.length; i += 2) opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);

    List<String> classes = new ArrayList<>();
    for (String a : opts.get("assignors").split(",")) classes.add(ASSIGNORS.get(a.trim()));
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
    props.put(ConsumerConfig.GROUP_ID_CONFIG, opts.get("group"));
    props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, opts.get("protocol"));
    if (opts.get("protocol").equals("classic")) {
      props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, String.join(",", classes));
      props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, opts.get("session-ms"));
      props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "300");
    } else if (opts.containsKey("remote-assignor")) {
      props.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, opts.get("remote-assignor"));
    }
    if (opts.containsKey("instance-id")) {
      props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, opts.get("instance-id"));
    }
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

    AtomicBoolean stop = new AtomicBoolean(false);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
      Thread stdin = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
          String line;
          while ((line = r.readLine()) != null && !line.trim().equals("stop")) {
            // keep reading
          }
        } catch (Exception ignored) {
          // treat as stop
        }
        stop.set(true);
        consumer.wakeup();
      });
      stdin.setDaemon(true);
      stdin.start();

      TreeSet<Integer> owned = new TreeSet<>();
      ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          if (!partitions.isEmpty()) tryCommit(consumer);
          for (TopicPartition tp : partitions) owned.remove(tp.partition());
          report(owned);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          for (TopicPartition tp : partitions) owned.add(tp.partition());
          report(owned);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
          for (TopicPartition tp : partitions) owned.remove(tp.partition());
          report(owned);
        }
      };
      final boolean byPattern = opts.containsKey("pattern");
      if (byPattern) {
        consumer.subscribe(new SubscriptionPattern(opts.get("pattern")), listener);
      } else {
        consumer.subscribe(List.of(opts.get("topic")), listener);
      }
      while (!stop.get()) {
        try {
          ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
          StringBuilder out = new StringBuilder();
          for (ConsumerRecord<byte[], byte[]> r : records) {
            if (byPattern) out.append("MT ").append(r.topic()).append(' ');
            else out.append("M ");
            out.append(r.partition()).append(' ').append(r.offset()).append('\n');
          }
          if (out.length() > 0) {
            System.out.print(out);
            System.out.flush();
            tryCommit(consumer);
          }
        } catch (WakeupException e) {
          break;
        }
      }
      try {
        consumer.commitSync();
      } catch (WakeupException e) {
        consumer.commitSync();  // the wakeup was still pending; the retry commits
      }
    }
    System.out.println("CLOSED");
    System.out.flush();
  }

  /** Commits what was consumed; a commit refused because a rebalance is under way is
   * retried later (or made by the partitions' next owner from its own position). */
  private static void tryCommit(KafkaConsumer<byte[], byte[]> consumer) {
    try {
      consumer.commitSync();
    } catch (RebalanceInProgressException | CommitFailedException e) {
      System.out.println("NOTE commit skipped: " + e.getClass().getSimpleName());
      System.out.flush();
    }
  }

  private static void report(TreeSet<Integer> owned) {
    StringBuilder sb = new StringBuilder("OWNED ");
    boolean first = true;
    for (int p : owned) {
      if (!first) sb.append(',');
      sb.append(p);
      first = false;
    }
    System.out.println(sb);
    System.out.flush();
  }
}
