#!/usr/bin/env bash
# Builds the MiniHdfs test program: target/strata-minihdfs.jar plus every runtime jar in
# target/lib. Idempotent: does nothing when target/.built is newer than pom.xml and the sources
# (FORCE_MAVEN=1 rebuilds anyway). Needs a JDK 17 and Maven; the first run downloads
# hadoop-client-minicluster and friends (~110 MB) from Maven Central.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
marker=target/.built
if [[ "${FORCE_MAVEN:-0}" != "1" && -e "$marker" && -z "$(find . -newer "$marker" \
      \( -name pom.xml -o -name '*.java' \) -not -path './target/*' 2>/dev/null)" ]]; then
  exit 0
fi
rm -rf target/lib  # no stale jars from an older pom on the classpath
mvn -q -B -Dstyle.color=never package
touch "$marker"
