import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A group's rebalance as its members live it (bench/rebalance.py): MEMBERS consumers of one
 * topic settle (every partition assigned, the same assignment for STABLE_MS), then one more
 * joins. Prints "RESULT rebalance_ms=R max_stall_ms=S median_stall_ms=M" where R is the time
 * from the new member's subscribe until the group holds every partition spread within one of
 * each other with the new member in it, and a member's stall is the longest time it went
 * without records between the join and 2 s after that (records trickle into every partition,
 * so a member that keeps consuming through the rebalance stalls for about a poll).
 *
 * <p>Usage: RebalanceProbe BOOTSTRAP TOPIC PARTITIONS GROUP classic|consumer MEMBERS
 */
public final class RebalanceProbe {
  private static final long STABLE_MS = 3000;

  /** One member: its thread, its assignment size and when it last got records. */
  static final class Member implements Runnable {
    final KafkaConsumer<byte[], byte[]> consumer;
    final String topic;
    final AtomicInteger owned = new AtomicInteger();
    final AtomicLong lastRecordNanos = new AtomicLong(System.nanoTime());
    final AtomicLong maxGapNanos = new AtomicLong();
    final AtomicBoolean measuring = new AtomicBoolean();
    final AtomicBoolean stop = new AtomicBoolean();
    volatile long lastChangeNanos = System.nanoTime();

    Member(Properties p, String topic) {
      this.consumer = new KafkaConsumer<>(p);
      this.topic = topic;
    }

    @Override
    public void run() {
      consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> parts) {
          owned.addAndGet(-parts.size());
          lastChangeNanos = System.nanoTime();
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> parts) {
          owned.addAndGet(parts.size());
          lastChangeNanos = System.nanoTime();
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> parts) {
          owned.addAndGet(-parts.size());
          lastChangeNanos = System.nanoTime();
        }
      });
      while (!stop.get()) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(50));
        long now = System.nanoTime();
        if (!records.isEmpty()) {
          long gap = now - lastRecordNanos.getAndSet(now);
          if (measuring.get()) maxGapNanos.accumulateAndGet(gap, Math::max);
        } else if (measuring.get()) {
          maxGapNanos.accumulateAndGet(now - lastRecordNanos.get(), Math::max);
        }
      }
      consumer.close(Duration.ofSeconds(5));
    }
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    int partitions = Integer.parseInt(args[2]);
    String group = args[3];
    String protocol = args[4];
    int members = Integer.parseInt(args[5]);
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    List<Member> group0 = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i <= members; i++) {
      Member m = new Member(p, topic);
      group0.add(m);
      threads.add(new Thread(m, "member-" + i));
    }
    for (int i = 0; i < members; i++) threads.get(i).start();
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (!settled(group0.subList(0, members), partitions, true)) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("the group never settled");
      Thread.sleep(20);
    }
    System.out.println("SETTLED");
    for (Member m : group0) {
      m.lastRecordNanos.set(System.nanoTime());
      m.measuring.set(true);
    }
    long t0 = System.nanoTime();
    threads.get(members).start();
    while (!settled(group0, partitions, false)) {
      if (System.nanoTime() > deadline + 60_000_000_000L)
        throw new IllegalStateException("the rebalance never finished");
      Thread.sleep(5);
    }
    long t1 = System.nanoTime();
    Thread.sleep(2000);
    List<Long> stalls = new ArrayList<>();
    for (int i = 0; i < members; i++) {
      group0.get(i).measuring.set(false);
      stalls.add(group0.get(i).maxGapNanos.get() / 1_000_000);
    }
    stalls.sort(null);
    System.out.printf("RESULT rebalance_ms=%d max_stall_ms=%d median_stall_ms=%d%n",
        (t1 - t0) / 1_000_000, stalls.get(stalls.size() - 1), stalls.get(stalls.size() / 2));
    System.out.flush();
    for (Member m : group0) m.stop.set(true);
    for (Thread t : threads) t.join(15000);
    System.exit(0);
  }

  /** Every partition held once, spread within one of each other; with `quiet`, also unchanged
   * for STABLE_MS. */
  private static boolean settled(List<Member> ms, int partitions, boolean quiet) {
    int sum = 0;
    int lo = Integer.MAX_VALUE;
    int hi = 0;
    long lastChange = 0;
    for (Member m : ms) {
      int o = m.owned.get();
      sum += o;
      lo = Math.min(lo, o);
      hi = Math.max(hi, o);
      lastChange = Math.max(lastChange, m.lastChangeNanos);
    }
    if (sum != partitions || hi - lo > 1) return false;
    return !quiet || System.nanoTime() - lastChange > STABLE_MS * 1_000_000L;
  }
}
