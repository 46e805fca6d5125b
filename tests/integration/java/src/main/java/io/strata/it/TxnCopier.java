package io.strata.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's exactly-once consume-transform-produce loop (kafka-clients): a read_committed
 * consumer in group --group subscribed to --input, and a transactional producer (its own
 * --transactional-id, KIP-447) that copies each poll's records to the same partition of
 * --output as "copy:" + value, committing the consumed offsets in the same transaction with
 * sendOffsetsToTransaction(offsets, consumer.groupMetadata()). A transaction that fails (a
 * rebalance moved the partitions: the group generation no longer matches) is aborted and the
 * consumer rewinds to the group's committed offsets. Runs until --stop-file exists. Output:
 *
 * <pre>
 *   ASSIGNED 0,1                 after each rebalance, the partitions now held
 *   ABORTED ExceptionClass       a transaction was aborted and the partitions rewound
 *   DONE committed=N aborted=M   at the end
 *   ERROR Class: message ...     anything unexpected (exit 1)
 * </pre>
 */
public final class TxnCopier {
  public static void main(String[] args) {
    Map<String, String> o = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    boolean ok;
    try {
      ok = run(o);
    } catch (Exception e) {
      System.out.println("ERROR " + TxnProducer.chain(e));
      ok = false;
    }
    System.out.flush();
    System.exit(ok ? 0 : 1);
  }

  static boolean run(Map<String, String> o) throws Exception {
    Path stop = Path.of(o.get("stop-file"));
    String output = o.get("output");
    int committed = 0, aborted = 0;
    try (KafkaConsumer<String, String> consumer = consumer(o);
        KafkaProducer<String, String> producer = producer(o)) {
      producer.initTransactions();
      consumer.subscribe(List.of(o.get("input")), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          Set<Integer> held = new TreeSet<>();
          for (TopicPartition tp : consumer.assignment()) held.add(tp.partition());
          System.out.println("ASSIGNED " + String.join(",", held.stream().map(String::valueOf).toList()));
          System.out.flush();
        }
      });
      while (!Files.exists(stop)) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) continue;
        producer.beginTransaction();
        try {
          Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
          for (ConsumerRecord<String, String> r : records) {
            producer.send(new ProducerRecord<>(output, r.partition(), r.key(), "copy:" + r.value()));
            offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
          }
          producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
          producer.commitTransaction();
          committed++;
        } catch (ProducerFencedException e) {
          throw e;  // another instance has this transactional id: nothing to recover
        } catch (KafkaException e) {
          producer.abortTransaction();
          aborted++;
          System.out.println("ABORTED " + e.getClass().getSimpleName());
          System.out.flush();
          rewind(consumer);
        }
      }
    }
    System.out.println("DONE committed=" + committed + " aborted=" + aborted);
    return true;
  }

  /** Seeks every held partition back to the group's committed offset (or its start). */
  static void rewind(KafkaConsumer<String, String> consumer) {
    Set<TopicPartition> held = consumer.assignment();
    Map<TopicPartition, OffsetAndMetadata> at = consumer.committed(held);
    for (TopicPartition tp : held) {
      OffsetAndMetadata c = at.get(tp);
      if (c != null) {
        consumer.seek(tp, c.offset());
      } else {
        consumer.seekToBeginning(List.of(tp));
      }
    }
  }

  static KafkaConsumer<String, String> consumer(Map<String, String> o) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(ConsumerConfig.GROUP_ID_CONFIG, o.get("group"));
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    return new KafkaConsumer<>(p);
  }

  static KafkaProducer<String, String> producer(Map<String, String> o) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, o.get("transactional-id"));
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    return new KafkaProducer<>(p);
  }
}
