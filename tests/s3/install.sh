#!/usr/bin/env bash
# Fetches S3Proxy (org.gaul:s3proxy, the runnable `jar-with-dependencies` classifier, ~55 MB) from
# Maven Central with Maven, as the other test deps are fetched: into the local Maven repository
# (~/.m2) and copied to tests/s3/target/, where tests/integration/s3kit.py runs it as a real
# S3-compatible server (filesystem backend) on a loopback port. Needs Java 17+ and Maven.
# Idempotent: does nothing when the jar is already there.
#
# Environment:
#   S3PROXY_VERSION   version to fetch (default below; s3kit.py must be told of a different one
#                     through STRATA_S3PROXY_JAR)
#   FORCE_S3PROXY=1   fetch and copy again even if the jar is there
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION="${S3PROXY_VERSION:-4.1.0}"
ARTIFACT="org.gaul:s3proxy:$VERSION:jar:jar-with-dependencies"
DEST="$HERE/target"
JAR="$DEST/s3proxy-$VERSION-jar-with-dependencies.jar"
DEP_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

log() { echo "[s3/install] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [[ "${FORCE_S3PROXY:-0}" != "1" && -s "$JAR" ]]; then
  log "$JAR already there"
  exit 0
fi

command -v mvn >/dev/null || die "no 'mvn' on PATH (apt-get install maven)"
command -v java >/dev/null || die "no 'java' on PATH: S3Proxy $VERSION needs Java 17 or newer"

log "mvn dependency:copy $ARTIFACT -> $DEST"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/s3proxy-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
if ! mvn -q -B -C -Dstyle.color=never "$DEP_PLUGIN:copy" -Dartifact="$ARTIFACT" \
      -DoutputDirectory="$tmp" -Dmdep.overWriteReleases=true >"$tmp/mvn.log" 2>&1; then
  tail -n 30 "$tmp/mvn.log" >&2
  die "could not fetch $ARTIFACT from Maven Central (output above)"
fi
got="$tmp/$(basename "$JAR")"
[[ -s "$got" ]] || die "Maven reported success but $got is missing or empty"
mkdir -p "$DEST"
mv -f "$got" "$JAR"  # whole file or nothing: a half-copied jar never looks installed
log "installed $JAR ($(du -h "$JAR" | cut -f1))"
