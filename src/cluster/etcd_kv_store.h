#pragma once
// EtcdKvStore: KvStore on an etcd v3 cluster over native gRPC: one channel
// that uses one member and moves to the next when it fails, so a dead member
// or an etcd leader change costs only a retriable error on calls in flight.
// Watches run on a thread each and resume from the last delivered revision
// + 1 after any stream failure.
//
// Thread-safety: as KvStore.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster/kv_store.h"

namespace strata::cluster {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // host:port of etcd members
  // Deadline of every unary call; a member without quorum answers within it.
  std::chrono::milliseconds request_timeout{5000};
  // TLS to etcd (strata.etcd.tls.*): the CA its certificate must chain to,
  // and a client certificate and key for --client-cert-auth. PEM files;
  // `ca_file` empty: plaintext.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // etcd's authentication (strata.etcd.user / strata.etcd.password): the
  // token of Authenticate goes with every call, and is fetched again when
  // etcd says it is no longer valid.
  std::string user;
  std::string password;
};

// Connects (lazily: gRPC dials on first use). kInvalidArgument for bad
// endpoints; Probe() tells whether etcd answers.
Result<std::unique_ptr<KvStore>> OpenEtcdKvStore(const EtcdOptions& options);

// Parses "host:port,host:port" (strata.etcd.endpoints); an http:// prefix is
// accepted and dropped, as etcdctl does.
Result<std::vector<std::string>> ParseEtcdEndpoints(const std::string& list);

}  // namespace strata::cluster
