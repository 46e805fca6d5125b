package io.strata.hdfs;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * Reads files back from HDFS with the Java client over the NameNode's native RPC (hdfs://), so a
 * test can check what Strata wrote over WebHDFS without going through Strata or WebHDFS.
 *
 * <p>Usage:
 *
 * <ul>
 *   <li>{@code HdfsDigest hdfs://127.0.0.1:PORT /dir}: one line per file under /dir (recursive),
 *       "{@code <sha256 hex> <length> <path>}", sorted by path; the last line is "{@code TOTAL
 *       <files> <bytes> <read seconds>}".
 *   <li>{@code HdfsDigest hdfs://127.0.0.1:PORT --cat /file}: the file's bytes on stdout.
 * </ul>
 *
 * <p>Every byte is read (the hash is over the data the DataNode returns, not the NameNode's
 * checksum metadata).
 */
public final class HdfsDigest {
  private HdfsDigest() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[1].equals("--cat")) {
      try (FileSystem fs = open(args[0]);
          InputStream in = fs.open(new Path(args[2]))) {
        OutputStream out = System.out;
        in.transferTo(out);
        out.flush();
      }
      return;
    }
    if (args.length != 2) {
      throw new IllegalArgumentException("usage: HdfsDigest hdfs://HOST:PORT (DIR | --cat FILE)");
    }
    try (FileSystem fs = open(args[0])) {
      java.util.List<LocatedFileStatus> files = new java.util.ArrayList<>();
      RemoteIterator<LocatedFileStatus> it = fs.listFiles(new Path(args[1]), true);
      while (it.hasNext()) {
        files.add(it.next());
      }
      files.sort((a, b) -> a.getPath().toUri().getPath().compareTo(b.getPath().toUri().getPath()));
      byte[] buf = new byte[1 << 20];
      long total = 0;
      long t0 = System.nanoTime();
      StringBuilder out = new StringBuilder();
      for (LocatedFileStatus f : files) {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        long n = 0;
        try (InputStream in = fs.open(f.getPath())) {
          for (int r; (r = in.read(buf)) > 0; ) {
            sha.update(buf, 0, r);
            n += r;
          }
        }
        if (n != f.getLen()) {
          throw new IllegalStateException(f.getPath() + ": read " + n + " of " + f.getLen());
        }
        total += n;
        out.append(HexFormat.of().formatHex(sha.digest())).append(' ').append(n).append(' ')
            .append(f.getPath().toUri().getPath()).append('\n');
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      out.append("TOTAL ").append(files.size()).append(' ').append(total).append(' ')
          .append(String.format("%.3f", secs)).append('\n');
      System.out.print(out);
      System.out.flush();
    }
  }

  private static FileSystem open(String uri) throws Exception {
    Configuration c = new Configuration();
    c.setBoolean("fs.hdfs.impl.disable.cache", true);
    return FileSystem.get(new URI(uri), c, "strata-test");
  }
}
