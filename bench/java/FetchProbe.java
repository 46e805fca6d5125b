import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Fetch traffic of one consumer of many partitions (bench/fetch_sessions.py): assigns every
 * partition of a topic at its end, polls for a warm-up and then for the measured seconds, and
 * prints what its connection to the broker sent: "RESULT records=N requests=R
 * request_bytes=B" over the measured window (the consumer's own node metrics, the same for
 * any broker).
 *
 * <p>Usage: FetchProbe BOOTSTRAP TOPIC PARTITIONS WARMUP_S SECONDS
 */
public final class FetchProbe {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    int partitions = Integer.parseInt(args[2]);
    long warmupMs = Long.parseLong(args[3]) * 1000;
    long measureMs = Long.parseLong(args[4]) * 1000;
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      List<TopicPartition> all = new ArrayList<>();
      for (int i = 0; i < partitions; i++) all.add(new TopicPartition(topic, i));
      c.assign(all);
      c.seekToEnd(all);
      long records = 0;
      long end = System.currentTimeMillis() + warmupMs;
      while (System.currentTimeMillis() < end) c.poll(Duration.ofMillis(200));
      double[] before = sent(c.metrics());
      System.out.println("MEASURING");
      System.out.flush();
      end = System.currentTimeMillis() + measureMs;
      while (System.currentTimeMillis() < end) records += c.poll(Duration.ofMillis(200)).count();
      double[] after = sent(c.metrics());
      System.out.printf("RESULT records=%d requests=%.0f request_bytes=%.0f%n", records,
          after[0] - before[0], after[1] - before[1]);
    }
  }

  /** {requests, bytes} sent to brokers (node ids >= 0; not the bootstrap connection). */
  private static double[] sent(Map<MetricName, ? extends Metric> metrics) {
    double requests = 0;
    double bytes = 0;
    for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
      MetricName n = e.getKey();
      if (!n.group().equals("consumer-node-metrics")) continue;
      String node = n.tags().getOrDefault("node-id", "");
      if (node.startsWith("node--")) continue;
      if (n.name().equals("request-total")) requests += (double) e.getValue().metricValue();
      if (n.name().equals("outgoing-byte-total")) bytes += (double) e.getValue().metricValue();
    }
    return new double[] {requests, bytes};
  }
}
