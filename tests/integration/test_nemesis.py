"""Nemesis: two idempotent acks=all producers, confluent-kafka and Kafka's Java client, write
unique values to an RF=3 topic of 6 partitions (min.insync.replicas=2, unclean election off) on
three brokers while the leader of the busiest partition is SIGKILLed and restarted, round after
round. Afterwards: no delivery error, every acknowledged value read back exactly once and in send
order per producer and partition, nothing read that was not sent, every restarted broker back in
every ISR, and every replica's log byte-identical. The counts (sent, acknowledged, read, lost,
duplicated) are printed.

STRATA_NEMESIS_ROUNDS sets the number of rounds: 10 here, 100 in scripts/soak.sh.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from collections import Counter

import pytest
from confluent_kafka import Producer

import kit
from kit import wait_until
from ports import free_port
from test_cluster import OFFLINE_WITHIN, leaders, start_cluster
from test_replication import JOIN_WITHIN, create_rf3, isr, wait_identical

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

ROUNDS = int(os.environ.get("STRATA_NEMESIS_ROUNDS", "10"))
SECURE_ROUNDS = int(os.environ.get("STRATA_NEMESIS_SECURE_ROUNDS", "4"))
PARTITIONS = 6


class ConfluentProducer:
    """An idempotent acks=all confluent-kafka producer writing "py-n" round-robin over the
    partitions from its own thread; what it sent and what was acknowledged, per partition,
    in order."""

    def __init__(self, bootstrap: str, topic: str, client: dict | None = None):
        self.topic = topic
        self.p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                           "acks": "all", "linger.ms": 5, "message.timeout.ms": 120000,
                           **(client or {})})
        self.sent: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.acked: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _delivered(self, err, msg):
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked[msg.partition()].append(msg.value())

    def _run(self):
        i = 0
        while not self.stop.is_set():
            value = b"py-%d" % i
            self.p.produce(self.topic, value, partition=i % PARTITIONS,
                           on_delivery=self._delivered)
            self.sent[i % PARTITIONS].append(value)
            i += 1
            self.p.poll(0.003)
        self.p.flush(120)

    def acked_count(self) -> int:
        return sum(len(v) for v in self.acked.values())


class JavaProducer:
    """tests/integration/java/.../AckedProducer.java: the same with Kafka's Java client,
    values "java-n"; it prints every acknowledgement and stops when its stdin closes."""

    def __init__(self, bootstrap: str, topic: str, command_config=None):
        extra = ["--command-config", str(command_config)] if command_config else []
        self.proc = subprocess.Popen(
            ["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
             "-cp", kit.JAVA_CLASSPATH, "io.strata.it.AckedProducer", "--bootstrap", bootstrap,
             "--topic", topic, "--partitions", str(PARTITIONS), "--prefix", "java",
             "--rate", "200", *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.acked: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.errors: list[str] = []
        self.sent = -1
        self.lines = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.stderr = ""
        self.err_reader = threading.Thread(target=self._read_err, daemon=True)
        self.err_reader.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = line.split()
            self.lines += 1
            if parts and parts[0] == "ACK":
                self.acked[int(parts[1])].append(parts[3].encode())
            elif parts and parts[0] == "ERR":
                self.errors.append(line.strip())
            elif parts and parts[0] == "DONE":
                self.sent = int(parts[1].split("=")[1])

    def _read_err(self):
        for line in self.proc.stderr:
            self.stderr += line

    def finish(self) -> None:
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(180)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the Java producer did not finish: {self.stderr[-3000:]}")
        self.reader.join(30)
        assert rc == 0 and self.sent >= 0, f"Java producer exited {rc}: {self.stderr[-3000:]}"


def test_leader_kills_lose_no_acknowledged_record(tmp_path, broker_factory):
    etcd, cluster = start_cluster(tmp_path, broker_factory)
    try:
        run_nemesis(cluster, ",".join(b.bootstrap for b in cluster), ROUNDS)
    finally:
        for b in cluster:
            b.stop()
        etcd.stop_all()


def test_leader_kills_over_sasl_ssl_lose_no_acknowledged_record(tmp_path, broker_factory):
    """The same over a secured cluster: brokers replicate, forward and write markers over a
    SASL_SSL inter-broker listener (PLAIN), the producers authenticate with SCRAM-SHA-512
    over a SASL_SSL client listener, ACLs on (StandardAuthorizer: the producers' user may
    write the topic idempotently, the brokers are super users), the balancer running and
    16 KiB segments tiered. (A PLAINTEXT listener, where ACLs let User:ANONYMOUS create,
    describe and read, serves the test's own set-up and checks.) SECURE_ROUNDS rounds."""
    from certs import CA
    from test_acls import ACL_CMD, tool
    from test_cluster import prometheus
    from test_sasl import PLAIN_JAAS, add_scram_user
    ca = CA(tmp_path / "certs")
    cert = ca.issue("nemesis", "localhost")
    ports = {n: (free_port(), free_port()) for n in (1, 2, 3)}
    per_node = {n: {"listeners": f"PLAINTEXT://127.0.0.1:{{port}},BROKER://127.0.0.1:{b},"
                                 f"CLIENT://127.0.0.1:{c}",
                    "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},"
                                            f"BROKER://localhost:{b},CLIENT://localhost:{c}"}
                for n, (b, c) in ports.items()}
    etcd, cluster = start_cluster(tmp_path, broker_factory, extra={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,BROKER:SASL_SSL,CLIENT:SASL_SSL",
        "inter.broker.listener.name": "BROKER",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.broker.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.client.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.keystore.location": str(cert.keystore),
        "ssl.truststore.location": str(ca.cert),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin",
        "strata.balancer.enable": "true"},
        per_node=per_node)
    try:
        admin_props = tmp_path / "admin.properties"
        admin_props.write_text(
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="admin" password="admin-secret";\n'
            f"ssl.truststore.type=PEM\nssl.truststore.location={ca.cert}\n")
        admin_bootstrap = f"localhost:{ports[1][1]}"
        add_scram_user(admin_bootstrap, "writer", "writer-secret", "--command-config",
                       str(admin_props))
        acl = ("--bootstrap-server", admin_bootstrap, "--command-config", str(admin_props), "--add")
        tool(ACL_CMD, *acl, "--allow-principal", "User:writer", "--operation", "Write",
             "--operation", "Describe", "--topic", "nemesis", "--resource-pattern-type",
             "prefixed")
        tool(ACL_CMD, *acl, "--allow-principal", "User:writer", "--operation",
             "IdempotentWrite", "--cluster")
        tool(ACL_CMD, *acl, "--allow-principal", "User:ANONYMOUS", "--operation", "Describe",
             "--operation", "Read", "--operation", "Create", "--topic", "*")
        tool(ACL_CMD, *acl, "--allow-principal", "User:ANONYMOUS", "--operation", "Read",
             "--group", "*")
        client = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                  "sasl.username": "writer", "sasl.password": "writer-secret",
                  "ssl.ca.location": str(ca.cert)}
        java_props = tmp_path / "writer.properties"
        java_props.write_text(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="writer" password="writer-secret";\n'
            f"ssl.truststore.type=PEM\nssl.truststore.location={ca.cert}\n")
        run_nemesis(cluster, ",".join(f"localhost:{c}" for _, c in ports.values()),
                    SECURE_ROUNDS, client, java_props,
                    {"remote.storage.enable": "true", "segment.bytes": str(16 * 1024)})
        uploads = sum(v for b in cluster if b.running for k, v in prometheus(b).items()
                      if k.startswith("strata_remote_uploads_total"))
        assert uploads > 0, "no segment was tiered during the run"
    finally:
        for b in cluster:
            b.stop()
        etcd.stop_all()


def run_nemesis(cluster, bootstrap: str, rounds: int, client: dict | None = None,
                java_config=None, topic_config: dict | None = None) -> None:
    """Both producers on `bootstrap` (with `client` settings, the Java one with
    `java_config`) writing a topic (with `topic_config`) while the leader of its busiest
    partition is killed and restarted `rounds` times; then every check of the module's
    docstring."""
    topic = kit.unique_topic("nemesis")
    create_rf3(cluster[0], topic, PARTITIONS, extra=topic_config)
    wait_until(lambda: all(i == [1, 2, 3] for i in isr(cluster[0], topic).values()),
               JOIN_WITHIN, "every ISR full", lambda: isr(cluster[0], topic))
    py = ConfluentProducer(bootstrap, topic, client)
    py.thread.start()
    java = JavaProducer(bootstrap, topic, java_config)
    failovers: list[float] = []
    try:
        wait_until(lambda: py.acked_count() >= 300 and java.lines >= 300, 60,
                   "both producers under way", lambda: (py.acked_count(), java.lines,
                                                        java.stderr[-2000:]))
        for round_ in range(rounds):
            busiest = max(range(PARTITIONS), key=lambda p: len(py.acked[p]))
            n = leaders(cluster[0] if cluster[0].running else cluster[1], topic)[busiest][0]
            victim = cluster[n - 1]
            others = [b for b in cluster if b is not victim]
            acked_before = py.acked_count()
            t0 = time.monotonic()
            victim.kill9()
            wait_until(lambda: all(leader not in (-1, n)
                                   for leader, _ in leaders(others[0], topic).values()),
                       OFFLINE_WITHIN, f"round {round_}: broker {n}'s partitions led by others",
                       lambda: leaders(others[0], topic))
            failovers.append(time.monotonic() - t0)
            wait_until(lambda: py.acked_count() > acked_before + 100, 30,
                       f"round {round_}: acknowledgements with broker {n} down",
                       lambda: (py.acked_count(), py.errors[:3]))
            victim.start()
            wait_until(lambda: all(i == [1, 2, 3] for i in isr(others[0], topic).values()),
                       JOIN_WITHIN, f"round {round_}: broker {n} back in every ISR",
                       lambda: isr(others[0], topic))
            print(f"round {round_}: broker {n} (leader of partition {busiest}) SIGKILLed, "
                  f"partitions led by others after {failovers[-1]:.2f}s")
    finally:
        py.stop.set()
        py.thread.join(180)
        java.finish()

    got = kit.consume_confluent(cluster[0].bootstrap, topic, PARTITIONS)
    read = {p: [m.value() for m in got[p]] for p in range(PARTITIONS)}
    everything = [v for p in range(PARTITIONS) for v in read[p]]
    counts = Counter(everything)
    acked = {(v, p) for src in (py.acked, java.acked) for p, vs in src.items() for v in vs}
    lost = [v for v, p in acked if v not in counts]
    duplicated = [v for v, c in counts.items() if c > 1]
    sent = sum(len(v) for v in py.sent.values()) + java.sent
    print(f"nemesis: {rounds} leader kills; sent {sent}, acknowledged {len(acked)}, "
          f"read {len(everything)}, lost {len(lost)}, duplicated {len(duplicated)}; "
          f"failover max {max(failovers):.2f}s, "
          f"median {sorted(failovers)[len(failovers) // 2]:.2f}s")
    assert py.errors == [] and java.errors == [], (py.errors[:3], java.errors[:3])
    assert lost == [] and duplicated == [], (lost[:5], duplicated[:5])
    for p in range(PARTITIONS):
        # In send order per producer and partition, nothing unsent.
        assert [v for v in read[p] if v.startswith(b"py-")] == py.acked[p] == py.sent[p], p
        # Send order (value n is the n-th sent); the Java client may report the
        # acknowledgements of one partition out of that order after a retry.
        java_sent_order = sorted(java.acked[p], key=lambda v: int(v.split(b"-")[1]))
        assert [v for v in read[p] if v.startswith(b"java-")] == java_sent_order, p
        assert all(v.startswith((b"py-", b"java-")) for v in read[p]), p
    assert len(everything) == sent, (len(everything), sent)
    wait_identical(cluster, topic, PARTITIONS)
