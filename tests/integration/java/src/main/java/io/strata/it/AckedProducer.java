package io.strata.it;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java side of the nemesis test: an idempotent acks=all producer writing unique values
 * ("PREFIX-n") round-robin over the topic's partitions, at about --rate records a second,
 * until its standard input closes; then it flushes and exits. Every acknowledgement is
 * printed as "ACK partition offset value", every failed send as "ERR partition value error",
 * and at the end "DONE sent=N", so the test knows what was acknowledged, where and in which
 * order.
 *
 * <p>Usage: AckedProducer --bootstrap HOST:PORT --topic T --partitions P --prefix X [--rate R]
 * [--command-config FILE] (client properties, as Kafka's tools read them: security.protocol,
 * ssl.*, sasl.*)
 */
public final class AckedProducer {
  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new HashMap<>();
    opts.put("rate", "300");
    for (int i = 0; i + 1 < args.length; i += 2) opts.put(args[i].substring(2), args[i + 1]);
    int partitions = Integer.parseInt(opts.get("partitions"));
    long pauseNanos = 1_000_000_000L / Long.parseLong(opts.get("rate"));

    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    if (opts.containsKey("command-config")) {
      try (InputStream in = new FileInputStream(opts.get("command-config"))) {
        props.load(in);
      }
    }

    AtomicBoolean stop = new AtomicBoolean(false);
    Thread stdin =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                while (r.readLine() != null) {}
              } catch (Exception e) {
                // closed either way
              }
              stop.set(true);
            });
    stdin.setDaemon(true);
    stdin.start();

    long sent = 0;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
      while (!stop.get()) {
        int partition = (int) (sent % partitions);
        String value = opts.get("prefix") + "-" + sent;
        producer.send(
            new ProducerRecord<>(
                opts.get("topic"), partition, null, value.getBytes(StandardCharsets.UTF_8)),
            (md, e) -> {
              synchronized (System.out) {
                if (e != null) {
                  System.out.println("ERR " + partition + " " + value + " " + e);
                } else {
                  System.out.println("ACK " + md.partition() + " " + md.offset() + " " + value);
                }
              }
            });
        sent++;
        long until = System.nanoTime() + pauseNanos;
        while (System.nanoTime() < until && !stop.get()) Thread.sleep(0, 200_000);
      }
      producer.flush();
    }
    synchronized (System.out) {
      System.out.println("DONE sent=" + sent);
      System.out.flush();
    }
  }
}
