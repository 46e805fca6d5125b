package io.strata.it;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Black-box check of a Kafka-compatible broker with the Java clients: produces N records
 * (keys, values, headers, explicit timestamps; some null keys/values/header values) spread
 * over the topic's partitions with one compression codec, remembers the offset each send
 * was acknowledged at, then reads every partition back with an assign()ed consumer and
 * compares key, value, headers and timestamp byte for byte at those exact offsets.
 *
 * <p>Usage: ProduceConsume --bootstrap HOST:PORT --topic T --partitions P --records N
 * --codec none|gzip|snappy|lz4|zstd [--idempotence true|false] [--acks all|1]
 * [--value-size BYTES] [--seed S] [--client-rack RACK] (the consumer's client.rack: with a
 * broker replica selector it reads from a follower in that rack, KIP-392)
 * [--command-config FILE] (client properties for both clients, as Kafka's tools read them:
 * security.protocol, ssl.*, sasl.*)
 *
 * <p>Prints one "SUMMARY ..." line. Exit code 0: all identical; 1: mismatches; 2: error.
 */
public final class ProduceConsume {
  private static final long BASE_TIMESTAMP = 1_700_000_000_000L;

  /** One record as sent, kept to compare with what is read back. */
  record Sent(int partition, byte[] key, byte[] value, List<Header> headers, long timestamp) {}

  public static void main(String[] args) {
    Map<String, String> opts = parseArgs(args);
    try {
      int mismatches = run(opts);
      System.exit(mismatches == 0 ? 0 : 1);
    } catch (Exception e) {
      e.printStackTrace();
      System.out.println("SUMMARY error=" + e);
      System.exit(2);
    }
  }

  private static Map<String, String> parseArgs(String[] args) {
    Map<String, String> opts = new HashMap<>();
    opts.put("idempotence", "true");
    opts.put("acks", "all");
    opts.put("value-size", "200");
    opts.put("seed", "42");
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) throw new IllegalArgumentException("bad arg " + args[i]);
      opts.put(args[i].substring(2), args[i + 1]);
    }
    for (String required : List.of("bootstrap", "topic", "partitions", "records", "codec")) {
      if (!opts.containsKey(required)) throw new IllegalArgumentException("missing --" + required);
    }
    return opts;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Deterministic record i: mixes binary and text values, null keys/values now and then. */
  static Sent makeRecord(int i, int partitions, int valueSize, long seed, String codec) {
    Random rnd = new Random(seed * 1_000_003L + i);
    byte[] key = (i % 97 == 13) ? null : utf8("key-" + i + "-" + Long.toHexString(rnd.nextLong()));
    byte[] value;
    if (i % 101 == 7) {
      value = null;
    } else {
      value = new byte[1 + rnd.nextInt(valueSize)];
      if (i % 2 == 0) {
        rnd.nextBytes(value);  // incompressible
      } else {
        for (int j = 0; j < value.length; j++) value[j] = (byte) ('a' + (j + i) % 7);
      }
    }
    RecordHeaders headers = new RecordHeaders();
    headers.add("idx", utf8(Integer.toString(i)));
    headers.add("codec", utf8(codec));
    headers.add("empty", new byte[0]);
    headers.add("dup", utf8("first"));
    headers.add("dup", utf8("second"));
    if (i % 7 == 0) headers.add("nullval", null);
    List<Header> list = Arrays.asList(headers.toArray());
    return new Sent(i % partitions, key, value, list, BASE_TIMESTAMP + i);
  }

  private static int run(Map<String, String> o) throws Exception {
    String topic = o.get("topic");
    int partitions = Integer.parseInt(o.get("partitions"));
    int n = Integer.parseInt(o.get("records"));
    String codec = o.get("codec");
    int valueSize = Integer.parseInt(o.get("value-size"));
    long seed = Long.parseLong(o.get("seed"));

    List<Sent> sent = new ArrayList<>(n);
    for (int i = 0; i < n; i++) sent.add(makeRecord(i, partitions, valueSize, seed, codec));
    long[] offsets = produce(o, topic, codec, sent);

    // expected[(partition, offset)] = index into sent
    Map<TopicPartition, Map<Long, Integer>> expected = new HashMap<>();
    for (int i = 0; i < n; i++) {
      TopicPartition tp = new TopicPartition(topic, sent.get(i).partition());
      Integer prev = expected.computeIfAbsent(tp, k -> new HashMap<>()).put(offsets[i], i);
      if (prev != null) throw new IllegalStateException("two sends acked at " + tp + "@" + offsets[i]);
    }
    Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> got = consume(o, topic, partitions);
    int mismatches = compare(sent, expected, got);
    int consumed = got.values().stream().mapToInt(List::size).sum();
    System.out.printf("SUMMARY codec=%s idempotence=%s acks=%s partitions=%d produced=%d consumed=%d mismatches=%d%n",
        codec, o.get("idempotence"), o.get("acks"), partitions, n, consumed, mismatches);
    return mismatches;
  }

  /** The properties of --command-config, if given. */
  private static Properties commandConfig(Map<String, String> o) {
    Properties p = new Properties();
    if (!o.containsKey("command-config")) return p;
    try (InputStream in = new FileInputStream(o.get("command-config"))) {
      p.load(in);
    } catch (IOException e) {
      throw new IllegalArgumentException("reading --command-config " + o.get("command-config"), e);
    }
    return p;
  }

  private static long[] produce(Map<String, String> o, String topic, String codec, List<Sent> sent)
      throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(ProducerConfig.ACKS_CONFIG, o.get("acks"));
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, o.get("idempotence"));
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
    p.putAll(commandConfig(o));
    long[] offsets = new long[sent.size()];
    Arrays.fill(offsets, -1);
    Map<Integer, Exception> failures = new ConcurrentHashMap<>();
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = 0; i < sent.size(); i++) {
        Sent s = sent.get(i);
        final int idx = i;
        ProducerRecord<byte[], byte[]> rec =
            new ProducerRecord<>(topic, s.partition(), s.timestamp(), s.key(), s.value(), s.headers());
        producer.send(rec, (md, ex) -> {
          if (ex != null) {
            failures.put(idx, ex);
          } else {
            offsets[idx] = md.offset();
            if (md.partition() != s.partition()) {
              failures.put(idx, new IllegalStateException("acked on partition " + md.partition()));
            }
          }
        });
      }
      producer.flush();
    }
    if (!failures.isEmpty()) {
      Map.Entry<Integer, Exception> first = failures.entrySet().iterator().next();
      throw new IllegalStateException(failures.size() + " sends failed, e.g. record " + first.getKey(),
          first.getValue());
    }
    return offsets;
  }

  private static Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> consume(
      Map<String, String> o, String topic, int partitions) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
    if (o.containsKey("client-rack")) p.put(ConsumerConfig.CLIENT_RACK_CONFIG, o.get("client-rack"));
    p.putAll(commandConfig(o));
    Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> got = new HashMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
      long deadline = System.currentTimeMillis() + 60_000;
      AtomicInteger emptyPolls = new AtomicInteger();
      while (!reachedEnd(consumer, tps, end)) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("timed out consuming; end offsets " + end);
        }
        var records = consumer.poll(Duration.ofMillis(500));
        if (records.isEmpty()) emptyPolls.incrementAndGet();
        for (ConsumerRecord<byte[], byte[]> r : records) {
          got.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>()).add(r);
        }
      }
    }
    return got;
  }

  private static boolean reachedEnd(
      KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps, Map<TopicPartition, Long> end) {
    for (TopicPartition tp : tps) {
      if (c.position(tp, Duration.ofSeconds(30)) < end.get(tp)) return false;
    }
    return true;
  }

  private static int compare(List<Sent> sent, Map<TopicPartition, Map<Long, Integer>> expected,
      Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> got) {
    int mismatches = 0;
    for (var e : expected.entrySet()) {
      TopicPartition tp = e.getKey();
      Map<Long, Integer> want = e.getValue();
      List<ConsumerRecord<byte[], byte[]>> have = got.getOrDefault(tp, List.of());
      if (have.size() != want.size()) {
        mismatches++;
        System.out.printf("MISMATCH %s: produced %d records, consumed %d%n", tp, want.size(), have.size());
      }
      long nextOffset = 0;
      for (ConsumerRecord<byte[], byte[]> r : have) {
        if (r.offset() != nextOffset) {
          mismatches++;
          System.out.printf("MISMATCH %s: offset %d where %d expected (not contiguous)%n", tp, r.offset(), nextOffset);
        }
        nextOffset = r.offset() + 1;
        Integer idx = want.get(r.offset());
        if (idx == null) {
          mismatches++;
          System.out.printf("MISMATCH %s@%d: consumed a record no send was acked at%n", tp, r.offset());
          continue;
        }
        String diff = diff(sent.get(idx), r);
        if (diff != null) {
          mismatches++;
          if (mismatches < 20) System.out.printf("MISMATCH %s@%d (record %d): %s%n", tp, r.offset(), idx, diff);
        }
      }
    }
    for (TopicPartition tp : got.keySet()) {
      if (!expected.containsKey(tp)) {
        mismatches++;
        System.out.printf("MISMATCH %s: records consumed from a partition nothing was sent to%n", tp);
      }
    }
    return mismatches;
  }

  private static String diff(Sent s, ConsumerRecord<byte[], byte[]> r) {
    if (!Arrays.equals(s.key(), r.key())) return "key differs";
    if (!Arrays.equals(s.value(), r.value())) return "value differs";
    if (s.timestamp() != r.timestamp()) return "timestamp " + r.timestamp() + " != " + s.timestamp();
    Header[] got = r.headers().toArray();
    if (got.length != s.headers().size()) return "header count " + got.length + " != " + s.headers().size();
    for (int i = 0; i < got.length; i++) {
      Header a = s.headers().get(i);
      if (!a.key().equals(got[i].key()) || !Arrays.equals(a.value(), got[i].value())) {
        return "header " + i + " (" + a.key() + ") differs";
      }
    }
    return null;
  }
}
