package io.strata.it;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A transactional producer (kafka-clients, transactional.id, idempotent, acks=all) for
 * Strata's transaction tests. Each transaction t writes --records values "t<t>-r<i>", record
 * i to the i-th partition (mod their number) of the --topics in order, so the test knows
 * what every partition holds. Output, one line each:
 *
 * <pre>
 *   COMMITTED t3 / ABORTED t2     a transaction ended (mode txns, and zombie's second producer)
 *   FENCED ExceptionClass         zombie: how the fenced first producer failed
 *   NOT_FENCED                    zombie: the first producer committed after being fenced
 *   OPEN t0                       hang: records flushed, transaction left open
 *   COMMIT_FAILED ExceptionClass  hang: the late commit failed
 *   ERROR Class: message <- Cause: message ...   anything unexpected (exit 1)
 * </pre>
 *
 * <p>Usage: TxnProducer --bootstrap HOST:PORT --transactional-id ID --topics A:2,B:1
 * [--mode txns|zombie|hang] [--transactions 6] [--records 20] [--abort-every 3]
 * [--timeout-ms 60000] [--group G]. --abort-every N aborts transactions N-1, 2N-1, ... (0:
 * none); with --group, transaction t also commits offset t+1 of the first partition for group G.
 *
 * <p>zombie: producer 1 opens a transaction and flushes --records values "zombie-r<i>"; producer
 * 2 with the same id calls initTransactions (which fences producer 1 and has the coordinator
 * abort its transaction); producer 1 then sends once more and commits, which must fail; producer
 * 2 commits one transaction.
 *
 * <p>hang: one transaction is flushed and left open ("OPEN t0") until a line arrives on stdin
 * (the test sends it once it has seen the coordinator abort the transaction after
 * --timeout-ms, so the outcome does not depend on how long a sleep turned out to be); then
 * commitTransaction, which must fail.
 *
 * <p>Exit code 0 when the mode's expected outcome happened, 1 otherwise.
 */
public final class TxnProducer {
  public static void main(String[] args) {
    Map<String, String> o = new HashMap<>(Map.of(
        "mode", "txns", "transactions", "6", "records", "20", "abort-every", "3",
        "timeout-ms", "60000"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    List<TopicPartition> parts = new ArrayList<>();
    for (String t : o.get("topics").split(",")) {
      String[] nameCount = t.split(":");
      for (int p = 0; p < Integer.parseInt(nameCount[1]); p++) {
        parts.add(new TopicPartition(nameCount[0], p));
      }
    }
    int records = Integer.parseInt(o.get("records"));
    boolean ok;
    try {
      ok = switch (o.get("mode")) {
        case "txns" -> {
          KafkaProducer<String, String> p = producer(o);
          p.initTransactions();
          yield runTxns(p, parts, Integer.parseInt(o.get("transactions")), records,
              Integer.parseInt(o.get("abort-every")), o.get("group"));
        }
        case "zombie" -> zombie(o, parts, records);
        case "hang" -> hang(producer(o), parts, records);
        default -> throw new IllegalArgumentException("unknown --mode " + o.get("mode"));
      };
    } catch (Exception e) {
      System.out.println("ERROR " + chain(e));
      ok = false;
    }
    System.out.flush();
    System.exit(ok ? 0 : 1);
  }

  static KafkaProducer<String, String> producer(Map<String, String> o) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, o.get("transactional-id"));
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, o.get("timeout-ms"));
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    return new KafkaProducer<>(p);
  }

  /** Sends value prefix + "r<i>" for i < n, record i to partition i mod |parts|, and waits
   *  for every acknowledgement (flush first: an abort drops batches not yet sent, and the
   *  tests count what reached the log). */
  static void sendAll(KafkaProducer<String, String> p, List<TopicPartition> parts, String prefix,
      int n) throws Exception {
    List<Future<RecordMetadata>> acks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      TopicPartition tp = parts.get(i % parts.size());
      acks.add(p.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, prefix + "r" + i)));
    }
    p.flush();
    for (Future<RecordMetadata> f : acks) f.get();
  }

  /** Runs transactions on an initialized producer, then closes it. With a group, transaction
   *  t also commits offset t+1 of the first partition for that group (AddOffsetsToTxn,
   *  TxnOffsetCommit), as a consume-transform-produce loop would. */
  static boolean runTxns(KafkaProducer<String, String> p, List<TopicPartition> parts, int txns,
      int records, int abortEvery, String group) throws Exception {
    try (p) {
      for (int t = 0; t < txns; t++) {
        p.beginTransaction();
        sendAll(p, parts, "t" + t + "-", records);
        if (group != null) {
          p.sendOffsetsToTransaction(Map.of(parts.get(0), new OffsetAndMetadata(t + 1)),
              new ConsumerGroupMetadata(group));
        }
        if (abortEvery > 0 && (t + 1) % abortEvery == 0) {
          p.abortTransaction();
          System.out.println("ABORTED t" + t);
        } else {
          p.commitTransaction();
          System.out.println("COMMITTED t" + t);
        }
      }
    }
    return true;
  }

  static boolean zombie(Map<String, String> o, List<TopicPartition> parts, int records)
      throws Exception {
    KafkaProducer<String, String> first = producer(o);
    first.initTransactions();
    first.beginTransaction();
    sendAll(first, parts, "zombie-", records);
    KafkaProducer<String, String> second = producer(o);
    second.initTransactions();  // bumps the epoch: the first producer is now a zombie
    boolean fenced;
    try {
      TopicPartition tp = parts.get(0);
      first.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, "zombie-late"));
      first.commitTransaction();
      System.out.println("NOT_FENCED");
      fenced = false;
    } catch (Exception e) {
      Throwable f = find(e, ProducerFencedException.class, InvalidProducerEpochException.class);
      System.out.println(
          f != null ? "FENCED " + f.getClass().getSimpleName() : "ERROR " + chain(e));
      fenced = f != null;
    } finally {
      first.close(Duration.ofSeconds(5));
    }
    return runTxns(second, parts, 1, records, 0, null) && fenced;
  }

  static boolean hang(KafkaProducer<String, String> p, List<TopicPartition> parts, int records)
      throws Exception {
    try (p) {
      p.initTransactions();
      p.beginTransaction();
      sendAll(p, parts, "t0-", records);
      System.out.println("OPEN t0");
      System.out.flush();
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
      try {
        p.commitTransaction();
        System.out.println("COMMITTED t0");
        return false;
      } catch (Exception e) {
        Throwable cause = e;  // the most specific cause names what the coordinator said
        while (cause.getCause() != null) cause = cause.getCause();
        System.out.println(
            "COMMIT_FAILED " + cause.getClass().getSimpleName() + " (" + chain(e) + ")");
        return true;
      }
    }
  }

  @SafeVarargs
  static Throwable find(Throwable e, Class<? extends Throwable>... kinds) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      for (Class<? extends Throwable> k : kinds) if (k.isInstance(c)) return c;
    }
    return null;
  }

  static String chain(Throwable e) {
    StringBuilder s = new StringBuilder();
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (s.length() > 0) s.append(" <- ");
      s.append(c.getClass().getName()).append(": ").append(c.getMessage());
    }
    return s.toString();
  }
}
