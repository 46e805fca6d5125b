package io.strata.hdfs;

import java.io.File;
import java.net.InetSocketAddress;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A one-NameNode, one-DataNode HDFS in this JVM for Strata's tiered-storage tests.
 *
 * <p>Usage: MiniHdfs --base-dir DIR [--format] [--nn-port N] [--http-port N]. Ports default to 0
 * (ephemeral). Without --format an existing DIR is reused, so a killed cluster can be restarted on
 * the same storage (pass the same ports so clients find it again). Prints
 * "READY &lt;namenode rpc port&gt; &lt;namenode http port&gt;" once WebHDFS can serve writes, then runs until
 * killed.
 */
public final class MiniHdfs {
  private MiniHdfs() {}

  public static void main(String[] args) throws Exception {
    String baseDir = null;
    boolean format = false;
    int nnPort = 0;
    int httpPort = 0;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--base-dir" -> baseDir = args[++i];
        case "--format" -> format = true;
        case "--nn-port" -> nnPort = Integer.parseInt(args[++i]);
        case "--http-port" -> httpPort = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (baseDir == null) {
      throw new IllegalArgumentException("--base-dir is required");
    }
    // A directory that never held a running cluster must be formatted even when not asked to.
    File formatted = new File(baseDir, ".strata-formatted");
    if (!formatted.exists()) {
      format = true;
    }

    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf(baseDir), new File(baseDir))
        .nameNodePort(nnPort)
        .nameNodeHttpPort(httpPort)
        .numDataNodes(1)
        .format(format)
        .build();
    cluster.waitActive();
    cluster.waitClusterUp();
    Runtime.getRuntime().addShutdownHook(new Thread(cluster::shutdown));

    formatted.createNewFile();
    InetSocketAddress http = cluster.getNameNode().getHttpAddress();
    System.out.println("READY " + cluster.getNameNodePort() + " " + http.getPort());
    System.out.flush();
    Thread.currentThread().join();
  }

  private static Configuration conf(String baseDir) {
    Configuration c = new HdfsConfiguration();
    c.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, baseDir);
    c.setBoolean("dfs.webhdfs.enabled", true);
    c.setBoolean("dfs.permissions.enabled", false);
    c.setInt("dfs.replication", 1);
    // One DataNode: a pipeline can never replace a node, so never try.
    c.set("dfs.client.block.write.replace-datanode-on-failure.policy", "NEVER");
    c.setBoolean("dfs.namenode.datanode.registration.ip-hostname-check", false);
    // Restart after kill -9: leave safe mode as soon as the DataNode has reported its blocks.
    c.setInt("dfs.namenode.safemode.extension", 0);
    // Small blocks so a 64 MiB test file spans several blocks.
    c.setLong("dfs.blocksize", 16L * 1024 * 1024);
    // Everything on loopback.
    c.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
    c.set("dfs.namenode.http-bind-host", "127.0.0.1");
    return c;
  }
}
