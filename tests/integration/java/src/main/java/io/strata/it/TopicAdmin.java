package io.strata.it;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * Kafka's Java AdminClient (kafka-clients 4.1) creating and describing topics, for Strata's
 * cluster tests.
 *
 * <p>Usage: TopicAdmin --bootstrap HOST:PORT create TOPIC PARTITIONS REPLICATION_FACTOR
 * (prints "CREATED TOPIC"), or TopicAdmin --bootstrap HOST:PORT describe TOPIC[,TOPIC...]
 * (describeTopics, one line per partition in partition order:
 * "PARTITION topic partition leader replica,replica,... isr,isr,..."; leader -1 if none).
 * Exit code 0: done; 2: error (stack trace on stderr).
 */
public final class TopicAdmin {
  public static void main(String[] args) {
    try {
      if (args.length < 4 || !args[0].equals("--bootstrap")) {
        throw new IllegalArgumentException("usage: --bootstrap HOST:PORT create|describe ...");
      }
      Properties p = new Properties();
      p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
      p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
      try (Admin admin = Admin.create(p)) {
        switch (args[2]) {
          case "create" -> {
            NewTopic t = new NewTopic(args[3], Integer.parseInt(args[4]), Short.parseShort(args[5]));
            admin.createTopics(List.of(t)).all().get(60, TimeUnit.SECONDS);
            System.out.println("CREATED " + args[3]);
          }
          case "describe" -> {
            Map<String, TopicDescription> all = admin.describeTopics(Arrays.asList(args[3].split(",")))
                .allTopicNames().get(60, TimeUnit.SECONDS);
            for (TopicDescription d : new TreeMap<>(all).values()) {
              for (TopicPartitionInfo pi : d.partitions()) {
                int leader = Optional.ofNullable(pi.leader()).map(Node::id).orElse(-1);
                System.out.printf("PARTITION %s %d %d %s %s%n", d.name(), pi.partition(), leader,
                    ids(pi.replicas()), ids(pi.isr()));
              }
            }
          }
          default -> throw new IllegalArgumentException("unknown command " + args[2]);
        }
      }
      System.exit(0);
    } catch (Exception e) {
      e.printStackTrace();
      System.exit(2);
    }
  }

  private static String ids(List<Node> nodes) {
    List<String> out = new ArrayList<>();
    for (Node n : nodes) out.add(Integer.toString(n.id()));
    return out.isEmpty() ? "-" : out.stream().collect(Collectors.joining(","));
  }
}
