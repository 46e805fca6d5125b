#!/usr/bin/env bash
# Installs the Debian packages Strata builds with. Idempotent: does nothing
# when every package is already installed.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev clang-format clang-tidy
  libasio-dev libspdlog-dev libfmt-dev zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev
  libisal-dev
  libcurl4-openssl-dev libssl-dev libexpat1-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  libbenchmark-dev libre2-dev
  librdkafka-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc golang-etcd-server-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi
