"""SASL listeners (SASL_PLAINTEXT, SASL_SSL) with Kafka's keys: sasl.enabled.mechanisms,
listener.name.<l>.plain.sasl.jaas.config (PLAIN users as user_<name>="password"), SCRAM-SHA-256/512
users made with kafka-configs (AlterUserScramCredentials; the credentials live in the metadata
store), connections.max.reauth.ms (KIP-368), connections.max.idle.ms and
sasl.server.max.receive.size for clients that never authenticate.

librdkafka produces and consumes with each mechanism, every record's bytes back identical; a
wrong password is refused with the client's authentication error, counted, logged, and the
broker keeps serving everyone else; a request before authentication closes the connection; a
re-authenticating producer keeps its connection past the session lifetime; Kafka's tools (the
Java client) authenticate with SCRAM over SASL_SSL from a --command-config, as do the Java
client's producer and consumer and franz-go (SCRAM and PLAIN); three brokers
replicate and commit a transaction over a SASL_SSL inter-broker listener."""
from __future__ import annotations

import base64
import json
import subprocess
import time
import urllib.request

import pytest
from confluent_kafka import Producer

import conftest
import kit
import rawkafka as raw
from certs import CA
from ports import free_port

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's listeners")

CONFIG_CMD = "kafka.admin.ConfigCommand"
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="admin" password="admin-secret" '
              'user_admin="admin-secret" user_alice="alice-secret" user_u="pw";')


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return CA(tmp_path_factory.mktemp("certs"))


def sasl_broker(broker_factory, protocol="SASL_PLAINTEXT", **extra):
    """A broker with PLAINTEXT on its usual port (for set-up) and a SASL listener named
    CLIENT on another; `extra` adds settings (underscores for dots)."""
    port = free_port()
    config = {"listeners": f"PLAINTEXT://127.0.0.1:{{port}},CLIENT://127.0.0.1:{port}",
              "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},CLIENT://localhost:{port}",
              "listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,CLIENT:{protocol}",
              "inter.broker.listener.name": "PLAINTEXT",
              "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
              "listener.name.client.plain.sasl.jaas.config": PLAIN_JAAS,
              "strata.admin.listener": f"127.0.0.1:{free_port()}"}
    config.update({k.replace("_", "."): str(v) for k, v in extra.items()})
    b = broker_factory(config=config)
    b.sasl_bootstrap = f"localhost:{port}"
    b.admin = config["strata.admin.listener"]
    return b


def sasl_client(mechanism: str, user: str, password: str, protocol="SASL_PLAINTEXT",
                ca_file=None) -> dict:
    conf = {"security.protocol": protocol, "sasl.mechanism": mechanism,
            "sasl.username": user, "sasl.password": password}
    if ca_file is not None:
        conf["ssl.ca.location"] = str(ca_file)
    return conf


def tool(main_class: str, *args: str) -> str:
    r = subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*", main_class, *args],
                       capture_output=True, text=True, timeout=120, errors="replace")
    assert r.returncode == 0, f"{main_class} {' '.join(args)}:\n{r.stdout}\n{r.stderr[-4000:]}"
    return r.stdout


def add_scram_user(bootstrap: str, user: str, password: str, *extra: str) -> None:
    tool(CONFIG_CMD, "--bootstrap-server", bootstrap, *extra, "--alter", "--add-config",
         f"SCRAM-SHA-256=[iterations=8192,password={password}],SCRAM-SHA-512=[password={password}]",
         "--entity-type", "users", "--entity-name", user)


def scram_users(bootstrap: str, client: dict | None = None) -> dict:
    """DescribeUserScramCredentials of every user: {user: {mechanism: iterations}}."""
    from confluent_kafka.admin import AdminClient
    a = AdminClient({"bootstrap.servers": bootstrap, **(client or {})})
    described = a.describe_user_scram_credentials().result(timeout=30)
    return {user: {str(c.mechanism).rsplit(".", 1)[-1].replace("_", "-"): c.iterations
                   for c in d.scram_credential_infos}
            for user, d in described.items()}


def round_trip(b, client: dict, n: int = 300) -> None:
    topic = kit.unique_topic("sasl")
    kit.create_topic(b.bootstrap, topic, 2)
    recs = kit.make_records(n, 2, seed=7, tag="sasl", value_size=2000)
    kit.produce_confluent(b.sasl_bootstrap, topic, recs, extra=client)
    got = kit.consume_confluent(b.sasl_bootstrap, topic, 2, extra=client)
    assert sorted((p, m.offset(), m.key(), m.value()) for p, ms in got.items() for m in ms) == \
        sorted((r.partition, r.offset, r.key, r.value) for r in recs)


def refused(b, client: dict) -> str:
    """A producer with `client` settings cannot deliver over the SASL listener: the
    authentication error librdkafka reports (its error callback: _AUTHENTICATION)."""
    topic = kit.unique_topic("refused")
    kit.create_topic(b.bootstrap, topic, 1)
    reported = []
    p = Producer({"bootstrap.servers": b.sasl_bootstrap, "message.timeout.ms": 4000,
                  "socket.timeout.ms": 3000, "log_level": 0,
                  "error_cb": lambda err: reported.append(err), **client})
    errors = []
    p.produce(topic, b"x", on_delivery=lambda err, msg: errors.append(err))
    p.flush(15)
    assert errors and errors[0] is not None, "delivered without authenticating"
    auth = [e for e in reported if e.code() == -169]  # _AUTHENTICATION
    assert auth, f"no authentication error reported: {reported}"
    return auth[0].str()


def metric(b, name: str, **labels) -> float:
    text = urllib.request.urlopen(f"http://{b.admin}/metrics", timeout=10).read().decode()
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_plain_and_scram_clients_produce_and_consume(broker_factory):
    b = sasl_broker(broker_factory)
    round_trip(b, sasl_client("PLAIN", "alice", "alice-secret"))
    add_scram_user(b.bootstrap, "bob", "bob-secret")
    assert scram_users(b.bootstrap) == {"bob": {"SCRAM-SHA-256": 8192, "SCRAM-SHA-512": 4096}}
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        round_trip(b, sasl_client(mechanism, "bob", "bob-secret"), n=100)
    assert metric(b, "strata_sasl_authentications_total", mechanism="SCRAM-SHA-512",
                  result="success") >= 1
    # One mechanism removed: that one is refused, the other still works.
    tool(CONFIG_CMD, "--bootstrap-server", b.bootstrap, "--alter", "--delete-config",
         "SCRAM-SHA-512", "--entity-type", "users", "--entity-name", "bob")
    print("deleted mechanism:", refused(b, sasl_client("SCRAM-SHA-512", "bob", "bob-secret")))
    round_trip(b, sasl_client("SCRAM-SHA-256", "bob", "bob-secret"), n=20)


def test_wrong_credentials_are_refused_and_others_served(broker_factory):
    b = sasl_broker(broker_factory)
    add_scram_user(b.bootstrap, "carol", "carol-secret")
    for client in (sasl_client("PLAIN", "alice", "wrong"),
                   sasl_client("PLAIN", "mallory", "alice-secret"),
                   sasl_client("SCRAM-SHA-256", "carol", "wrong"),
                   sasl_client("SCRAM-SHA-512", "nobody", "carol-secret")):
        err = refused(b, client)
        print(client["sasl.mechanism"], client["sasl.username"], "->", err)
        assert "Authentication failed" in err, err
    assert metric(b, "strata_sasl_authentications_total", result="failure") >= 4
    kit.wait_until(lambda: "failed authentication with SCRAM-SHA-256" in b.log_tail(), 10,
                   "the failed authentications logged")
    round_trip(b, sasl_client("PLAIN", "alice", "alice-secret"), n=20)
    round_trip(b, sasl_client("SCRAM-SHA-256", "carol", "carol-secret"), n=20)
    # A mechanism the listener does not enable is refused with the enabled ones listed.
    with raw.Conn(b.sasl_bootstrap, timeout=10) as conn:
        conn.send(raw.request(17, 1, 7, bytes(raw.Writer().string("GSSAPI").buf)))
        cid, body = conn.recv_frame()
        r = raw.Reader(body)
        assert (cid, r.i16()) == (7, 33)  # UNSUPPORTED_SASL_MECHANISM
        assert sorted(r.string() for _ in range(r.array_len())) == \
            ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


def test_unauthenticated_connections_are_closed(broker_factory):
    b = sasl_broker(broker_factory, connections_max_idle_ms=1500)
    # A Kafka request before SASL: closed at once, without an answer.
    with raw.Conn(b.sasl_bootstrap, timeout=10) as conn:
        conn.send(raw.request(3, 1, 1, bytes(raw.Writer().i32(0).buf)))  # Metadata v1
        conn.wait_closed(10)
    kit.wait_until(lambda: "unexpected Metadata request before SASL authentication"
                   in b.log_tail(), 10, "the refused request logged")
    # ApiVersions is allowed first, then nothing: closed once idle.
    with raw.Conn(b.sasl_bootstrap, timeout=10) as conn:
        conn.send(raw.request(18, 0, 2))
        assert conn.recv_frame()[0] == 2
        t0 = time.monotonic()
        conn.wait_closed(15)
        assert time.monotonic() - t0 >= 1.0
    kit.wait_until(lambda: "without authenticating (connections.max.idle.ms)" in b.log_tail(),
                   10, "the idle close logged")
    # ApiVersions is answered once before the handshake (an UNSUPPORTED_VERSION
    # answer does not count): a second one closes the connection, as Kafka's.
    with raw.Conn(b.sasl_bootstrap, timeout=10) as conn:
        conn.send(raw.request(18, 99, 3, flexible_header=True))
        cid, body = conn.recv_frame()
        assert (cid, raw.Reader(body).i16()) == (3, 35)  # UNSUPPORTED_VERSION
        conn.send(raw.request(18, 2, 4))
        assert conn.recv_frame()[0] == 4
        conn.send(raw.request(18, 2, 5))
        conn.wait_closed(10)
    kit.wait_until(lambda: "a second ApiVersions request before SaslHandshake" in b.log_tail(),
                   10, "the second ApiVersions logged")
    # A frame larger than sasl.server.max.receive.size before authentication.
    with raw.Conn(b.sasl_bootstrap, timeout=10) as conn:
        conn.sock.sendall((600000).to_bytes(4, "big") + b"\0" * 1024)
        conn.wait_closed(10)
    kit.wait_until(lambda: "sasl.server.max.receive.size" in b.log_tail(), 10,
                   "the oversized frame logged")
    round_trip(b, sasl_client("PLAIN", "alice", "alice-secret"), n=20)


def test_sasl_handshake_v0_with_bare_tokens(broker_factory):
    """SaslHandshake v0, which Kafka still serves (and which librdkafka 2.0.2, Debian 12's,
    needs offered before it authenticates at all): the client's tokens then come as bare
    size-prefixed frames and the broker's go back as bare frames; a wrong password closes the
    connection unanswered. Debian's librdkafka itself (the one `strata bench` links)
    produces and consumes over SASL PLAIN and SCRAM."""
    import os
    b = sasl_broker(broker_factory)

    def handshake_v0(conn: raw.Conn) -> None:
        conn.send(raw.request(17, 0, 1, bytes(raw.Writer().string("PLAIN").buf)))
        cid, body = conn.recv_frame()
        r = raw.Reader(body)
        assert (cid, r.i16()) == (1, 0)

    with raw.Conn(b.sasl_bootstrap, timeout=10) as conn:
        handshake_v0(conn)
        conn.send(len(b"\0alice\0alice-secret").to_bytes(4, "big") + b"\0alice\0alice-secret")
        assert conn._recv_exact(4) == b"\0\0\0\0"  # PLAIN's empty final token, bare
        conn.send(raw.request(3, 1, 2, bytes(raw.Writer().i32(0).buf)))  # Metadata v1
        assert conn.recv_frame()[0] == 2
    # A token shorter than any Kafka request (5 bytes) is a token all the same.
    with raw.Conn(b.sasl_bootstrap, timeout=10) as conn:
        handshake_v0(conn)
        conn.send((5).to_bytes(4, "big") + b"\0u\0pw")
        assert conn._recv_exact(4) == b"\0\0\0\0"
        conn.send(raw.request(3, 1, 2, bytes(raw.Writer().i32(0).buf)))
        assert conn.recv_frame()[0] == 2
    with raw.Conn(b.sasl_bootstrap, timeout=10) as conn:
        handshake_v0(conn)
        conn.send(len(b"\0alice\0wrong").to_bytes(4, "big") + b"\0alice\0wrong")
        assert conn.wait_closed(10) == b""
    kit.wait_until(lambda: "SASL authentication (bare tokens) failed" in b.log_tail(), 10,
                   "the failure logged")

    # SCRAM too: librdkafka before 2.6.1 repeats its nonce in its final message (librdkafka
    # issue 4895), which Kafka 4 refuses and Strata accepts.
    add_scram_user(b.bootstrap, "bob", "bob-secret")
    for mechanism, user, password in [("PLAIN", "alice", "alice-secret"),
                                      ("SCRAM-SHA-256", "bob", "bob-secret")]:
        topic = kit.unique_topic("rdk-202")
        kit.create_topic(b.bootstrap, topic, 2)
        settings = []
        for k, v in sasl_client(mechanism, user, password).items():
            settings += ["--set", f"{k}={v}"]
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        for cmd in (["produce", "--records", "500", "--record-size", "200"],
                    ["consume", "--records", "500", "--timeout", "60"]):
            r = subprocess.run([conftest.STRATA_BIN, "bench", *cmd, "--bootstrap",
                                b.sasl_bootstrap, "--topic", topic, *settings],
                               capture_output=True, text=True, timeout=120, env=env)
            assert r.returncode == 0, (mechanism, cmd[0], r.stdout, r.stderr[-3000:])
            assert " 500 records" in r.stdout, r.stdout


def test_clients_reauthenticate_within_the_session_lifetime(broker_factory):
    """connections.max.reauth.ms=2000: librdkafka re-authenticates its connections
    (KIP-368) and keeps producing on them; nothing is closed for an expired session."""
    b = sasl_broker(broker_factory, connections_max_reauth_ms=2000)
    add_scram_user(b.bootstrap, "dave", "dave-secret")
    topic = kit.unique_topic("reauth")
    kit.create_topic(b.bootstrap, topic, 1)
    p = Producer({"bootstrap.servers": b.sasl_bootstrap, "acks": "all",
                  **sasl_client("SCRAM-SHA-256", "dave", "dave-secret")})
    before = metric(b, "strata_sasl_authentications_total", mechanism="SCRAM-SHA-256",
                    result="success")
    deadline = time.monotonic() + 7
    sent = 0
    while time.monotonic() < deadline:
        p.produce(topic, f"r{sent}".encode())
        sent += 1
        p.poll(0.05)
    assert p.flush(30) == 0
    after = metric(b, "strata_sasl_authentications_total", mechanism="SCRAM-SHA-256",
                   result="success")
    assert after - before >= 3, f"{after - before} authentications over 7 s of 2 s sessions"
    assert "SASL session expired" not in b.log_tail()
    got = kit.consume_confluent(b.bootstrap, topic, 1)
    assert [m.value() for m in got[0]] == [f"r{i}".encode() for i in range(sent)]


def test_scram_over_sasl_ssl_with_kafka_tools(broker_factory, ca, tmp_path):
    if not list(kit.KAFKA_LIB.glob("kafka-tools-*.jar")):
        pytest.fail(f"Kafka tool jars missing in {kit.KAFKA_LIB}: run scripts/install-test-deps.sh")
    cert = ca.issue("sasl-broker", "localhost")
    b = sasl_broker(broker_factory, protocol="SASL_SSL", ssl_keystore_location=cert.keystore)
    add_scram_user(b.bootstrap, "erin", "erin-secret")
    round_trip(b, sasl_client("SCRAM-SHA-512", "erin", "erin-secret", "SASL_SSL", ca.cert))
    client = tmp_path / "client.properties"
    client.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="erin" password="erin-secret";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={ca.cert}\n")
    topic = kit.unique_topic("sasl-tools")
    tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", b.sasl_bootstrap,
         "--command-config", str(client), "--create", "--topic", topic, "--partitions", "2",
         "--replication-factor", "1")
    recs = kit.make_records(40, 2, seed=3, tag="sasl-tools", nulls=False)
    kit.produce_confluent(b.sasl_bootstrap, topic, recs,
                          extra=sasl_client("PLAIN", "alice", "alice-secret", "SASL_SSL",
                                            ca.cert))
    out = tool("org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", b.sasl_bootstrap,
               "--command-config", str(client), "--topic", topic)
    assert sorted(out.split()) == sorted(f"{topic}:{p}:20" for p in range(2)), out
    # SCRAM users managed over the SASL_SSL listener too.
    add_scram_user(b.sasl_bootstrap, "frank", "frank-secret", "--command-config", str(client))
    assert sorted(scram_users(b.sasl_bootstrap, sasl_client(
        "SCRAM-SHA-256", "frank", "frank-secret", "SASL_SSL", ca.cert))) == ["erin", "frank"]
    bad = tmp_path / "bad.properties"
    bad.write_text(client.read_text().replace('password="erin-secret"', 'password="nope"'))
    r = subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*",
                        "org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                        b.sasl_bootstrap, "--command-config", str(bad), "--list"],
                       capture_output=True, text=True, timeout=120, errors="replace")
    assert r.returncode != 0 and "SaslAuthenticationException" in r.stdout + r.stderr, \
        (r.stdout + r.stderr)[-3000:]


def test_java_client_and_franz_go_over_sasl_ssl(broker_factory, ca, tmp_path):
    """Apache Kafka's Java client (SCRAM-SHA-512, settings from a client properties file) and
    franz-go (SCRAM-SHA-256 and PLAIN) over SASL_SSL: each produces and reads back its records
    byte for byte; franz-go with a wrong password gets SASL_AUTHENTICATION_FAILED."""
    from test_franz_go import BIN, assert_same, events, franzgo
    cert = ca.issue("sasl-clients", "localhost")
    b = sasl_broker(broker_factory, protocol="SASL_SSL", ssl_keystore_location=cert.keystore)
    add_scram_user(b.bootstrap, "gina", "gina-secret")
    client = tmp_path / "java.properties"
    client.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="gina" password="gina-secret";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={ca.cert}\n")
    topic = kit.unique_topic("sasl-java")
    kit.create_topic(b.bootstrap, topic, 3)
    r = subprocess.run(["java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                        "-cp", kit.JAVA_CLASSPATH, "io.strata.it.ProduceConsume",
                        "--bootstrap", b.sasl_bootstrap, "--topic", topic, "--partitions", "3",
                        "--records", "3000", "--codec", "lz4", "--command-config", str(client)],
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0 and "produced=3000 consumed=3000 mismatches=0" in r.stdout, \
        (r.stdout + r.stderr)[-6000:]

    if not BIN.exists():
        pytest.fail(f"{BIN} missing: run scripts/install-test-deps.sh")
    for mechanism, user, password in [("SCRAM-SHA-256", "gina", "gina-secret"),
                                      ("PLAIN", "alice", "alice-secret")]:
        auth = {"tls_ca": ca.cert, "sasl_mechanism": mechanism, "sasl_user": user,
                "sasl_password": password}
        topic = kit.unique_topic("sasl-franz")
        kit.create_topic(b.bootstrap, topic, 2)
        acked = events(franzgo("produce", b.sasl_bootstrap, topic=topic, n=500, codec="zstd",
                               **auth), "acked")
        assert len(acked) == 500
        got = events(franzgo("consume", b.sasl_bootstrap, topics=topic, n=500, **auth),
                     "record")
        assert_same(got, acked, f"franz-go over SASL_SSL with {mechanism}")
    bad = subprocess.run([str(BIN), "produce", "-brokers", b.sasl_bootstrap, "-timeout", "15s",
                          "-topic", topic, "-n", "1", "-tls-ca", str(ca.cert),
                          "-sasl-mechanism", "SCRAM-SHA-256", "-sasl-user", "gina",
                          "-sasl-password", "wrong"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "SASL_AUTHENTICATION_FAILED" in bad.stderr, bad.stderr[-3000:]


def test_brokers_replicate_over_a_sasl_ssl_inter_broker_listener(tmp_path, broker_factory, ca):
    """Three brokers whose inter-broker listener is SASL_SSL with PLAIN: replication,
    forwarding and transaction markers all authenticate, so an RF=3 topic keeps its full ISR
    and a transaction commits; clients use SCRAM on the same listener."""
    from confluent_kafka.admin import NewTopic
    from test_cluster import start_cluster
    from test_listeners import connections
    from test_transactions import list_offsets, read
    cert = ca.issue("sasl-peer", "localhost")
    ports = {n: free_port() for n in (1, 2, 3)}
    per_node = {n: {"listeners": f"PLAINTEXT://127.0.0.1:{{port}},BROKER://127.0.0.1:{ports[n]}",
                    "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},"
                                            f"BROKER://localhost:{ports[n]}"}
                for n in (1, 2, 3)}
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,BROKER:SASL_SSL",
        "inter.broker.listener.name": "BROKER",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.broker.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.keystore.location": str(cert.keystore),
        "ssl.truststore.location": str(ca.cert)}, per_node=per_node)
    try:
        b1, b2, b3 = brokers
        add_scram_user(b1.bootstrap, "gina", "gina-secret")
        topic = kit.unique_topic("sasl-peers")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 3, 3, config={"min.insync.replicas": "2"})]
                        )[topic].result(timeout=30)

        def full_isr():
            parts = a.list_topics(topic, timeout=10).topics[topic].partitions
            return len(parts) == 3 and all(len(p.isrs) == 3 for p in parts.values())
        kit.wait_until(full_isr, 60, "a full ISR over the SASL_SSL inter-broker listener")
        for b in brokers:
            assert connections(b, "BROKER") > 0
        client = sasl_client("SCRAM-SHA-256", "gina", "gina-secret", "SASL_SSL", ca.cert)
        bootstrap = f"localhost:{ports[2]}"
        plain = Producer({"bootstrap.servers": bootstrap, "acks": "all", **client})
        for i in range(200):
            plain.produce(topic, value=f"rec-{i}".encode(), partition=i % 3)
        assert plain.flush(60) == 0
        p = Producer({"bootstrap.servers": f"localhost:{ports[3]}",
                      "transactional.id": "sasl-peers", **client})
        p.init_transactions(60)
        p.begin_transaction()
        for i in range(30):
            p.produce(topic, value=f"txn-{i}".encode(), partition=i % 3)
        p.commit_transaction(60)
        tps = [(topic, i) for i in range(3)]
        ends = kit.wait_until(
            lambda: (lambda lso, hw: lso == hw and hw)(list_offsets(b1.bootstrap, tps, True),
                                                       list_offsets(b1.bootstrap, tps, False)),
            30, "the transaction's markers written over the SASL_SSL listener")
        got = read(b1.bootstrap, tps, "read_committed", ends)
        values = sorted(v for recs_ in got.values() for _, v in recs_)
        assert values == sorted([f"rec-{i}" for i in range(200)] +
                                [f"txn-{i}" for i in range(30)])
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_sasl_settings_that_cannot_work_stop_start_up(tmp_path):
    import conftest
    cases = {
        "GSSAPI": ({"sasl.enabled.mechanisms": "GSSAPI"}, "GSSAPI is not supported"),
        "PLAIN without users": ({"sasl.enabled.mechanisms": "PLAIN"}, "plain.sasl.jaas.config"),
        "bad JAAS": ({"sasl.enabled.mechanisms": "PLAIN",
                      "listener.name.sasl_plaintext.plain.sasl.jaas.config":
                          "PlainLoginModule required user_a=\"x\""}, "sasl.jaas.config"),
    }
    for name, (settings, expect) in cases.items():
        props = tmp_path / f"{name.replace(' ', '-')}.properties"
        lines = [f"listeners=PLAINTEXT://127.0.0.1:{free_port()},"
                 f"SASL_PLAINTEXT://127.0.0.1:{free_port()}",
                 f"log.dirs={tmp_path / 'data'}"] + [f"{k}={v}" for k, v in settings.items()]
        props.write_text("\n".join(lines) + "\n")
        r = subprocess.run([conftest.STRATA_BIN, "serve", "--config", str(props)],
                           capture_output=True, text=True, timeout=60)
        out = r.stdout + r.stderr
        assert r.returncode != 0, f"{name}: started\n{out[-3000:]}"
        assert expect in out, f"{name}:\n{out[-3000:]}"


def alter_scram_raw(bootstrap: str, upsertions=(), deletions=()) -> list[tuple[str, int, str]]:
    """AlterUserScramCredentials v0 as raw bytes (Kafka's tools check iterations before
    sending): [(user, error code, message)]."""
    w = raw.Writer(flexible=True)
    w.array(list(deletions), lambda w2, d: w2.string(d[0]).i8(d[1]).tags())
    w.array(list(upsertions), lambda w2, u: w2.string(u[0]).i8(u[1]).i32(u[2]).bytes_(u[3])
            .bytes_(u[4]).tags())
    w.tags()
    with raw.Conn(bootstrap, timeout=10) as conn:
        conn.send(raw.request(51, 0, 9, bytes(w.buf), flexible_header=True))
        cid, body = conn.recv_frame()
    r = raw.Reader(body, flexible=True)
    r.skip_tags()  # response header v1
    r.i32()
    out = []
    for _ in range(r.array_len()):
        out.append((r.string(), r.i16(), r.string()))
        r.skip_tags()
    return out


def test_bad_scram_alterations_get_kafkas_errors(broker_factory):
    b = sasl_broker(broker_factory)
    salt, salted = b"s" * 16, b"p" * 32
    assert alter_scram_raw(b.bootstrap, upsertions=[("weak", 1, 100, salt, salted)]) == \
        [("weak", 93, "Too few iterations")]  # UNACCEPTABLE_CREDENTIAL
    assert alter_scram_raw(b.bootstrap, upsertions=[("big", 1, 20000, salt, salted)]) == \
        [("big", 93, "Too many iterations")]
    assert alter_scram_raw(b.bootstrap, upsertions=[("odd", 3, 4096, salt, salted)]) == \
        [("odd", 33, "Unknown SCRAM mechanism")]  # UNSUPPORTED_SASL_MECHANISM
    assert alter_scram_raw(b.bootstrap, deletions=[("ghost", 2)]) == \
        [("ghost", 91, "Attempt to delete a user credential that does not exist")]
    assert alter_scram_raw(b.bootstrap, upsertions=[("twice", 1, 4096, salt, salted)],
                           deletions=[("twice", 1)]) == \
        [("twice", 92, "A user credential cannot be altered twice in the same request")]
    # None of them wrote anything; a good one does.
    assert scram_users(b.bootstrap) == {}
    assert alter_scram_raw(b.bootstrap, upsertions=[("ok", 2, 4096, salt, salted)]) == \
        [("ok", 0, None)]
    assert scram_users(b.bootstrap) == {"ok": {"SCRAM-SHA-512": 4096}}
    r = subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*", CONFIG_CMD,
                        "--bootstrap-server", b.bootstrap, "--alter", "--delete-config",
                        "SCRAM-SHA-256", "--entity-type", "users", "--entity-name", "ok"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "does not exist" in r.stdout + r.stderr, \
        (r.stdout + r.stderr)[-3000:]


class TokenIssuer:
    """An OAuth issuer for tests: an RSA key published as a JWKS file, signing RS256 JWTs."""

    def __init__(self, path, kid="test-key"):
        from cryptography.hazmat.primitives.asymmetric import rsa
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = kid
        nums = self.key.public_key().public_numbers()
        self.jwks = path
        path.write_text(json.dumps({"keys": [{
            "kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
            "n": b64url(nums.n.to_bytes((nums.n.bit_length() + 7) // 8, "big")),
            "e": b64url(nums.e.to_bytes(3, "big"))}]}))

    def token(self, sub="svc-orders", aud="strata", iss="https://issuer.test",
              lifetime=300.0, key=None) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        now = time.time()
        header = {"alg": "RS256", "typ": "JWT", "kid": self.kid}
        self.last_exp = int(now + lifetime)
        claims = {"sub": sub, "aud": aud, "iss": iss, "iat": int(now),
                  "exp": self.last_exp, "scope": "kafka"}
        signing_input = (b64url(json.dumps(header).encode()) + "." +
                         b64url(json.dumps(claims).encode()))
        signature = (key or self.key).sign(signing_input.encode(), padding.PKCS1v15(),
                                           hashes.SHA256())
        return signing_input + "." + b64url(signature)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def oauth_client(token_fn, issuer=None) -> dict:
    """librdkafka with OAUTHBEARER: the token from `token_fn()` on every refresh. librdkafka
    is told the token's own expiry when `issuer` is given, else that it expires in a minute
    (so it sends even expired tokens)."""
    def cb(_):
        token = token_fn()
        return token, (issuer.last_exp if issuer else time.time() + 60)
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            "oauth_cb": cb}


def test_oauthbearer_tokens_are_checked_against_the_jwks(broker_factory, tmp_path):
    from cryptography.hazmat.primitives.asymmetric import rsa
    issuer = TokenIssuer(tmp_path / "jwks.json")
    b = sasl_broker(broker_factory, sasl_enabled_mechanisms="OAUTHBEARER,PLAIN",
                    sasl_oauthbearer_jwks_endpoint_url=f"file://{issuer.jwks}",
                    sasl_oauthbearer_expected_audience="strata",
                    sasl_oauthbearer_expected_issuer="https://issuer.test")
    round_trip(b, oauth_client(issuer.token), n=50)
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    # Each bad token with the reason the broker logs for it. As Kafka's
    # OAuthBearerSaslServer, the broker tells the client only RFC 7628's
    # {"status":"invalid_token"} (its error challenge, then the failure after
    # the client's 0x01), which librdkafka reports as "SASL authentication
    # error: <that JSON>".
    cases = {
        "expired": (lambda: issuer.token(lifetime=-120), "the token expired at"),
        "wrong audience": (lambda: issuer.token(aud="someone-else"),
                           "includes none of the expected audience"),
        "wrong issuer": (lambda: issuer.token(iss="https://evil.test"),
                         "is not the expected issuer"),
        "bad signature": (lambda: issuer.token(key=other_key), "invalid signature"),
    }
    for name, (fn, reason) in cases.items():
        err = refused(b, oauth_client(fn))
        print(name, "->", err)
        assert 'SASL authentication error: {"status":"invalid_token"}' in err, (name, err)
        assert reason not in err, (name, err)
        kit.wait_until(lambda: any('OAUTHBEARER: {"status":"invalid_token"} (' in line and
                                   reason in line for line in b.log_tail().splitlines()),
                       10, f"the broker logging why ({reason})")
    assert metric(b, "strata_sasl_authentications_total", mechanism="OAUTHBEARER",
                  result="failure") >= len(cases)
    round_trip(b, oauth_client(issuer.token), n=20)


def test_a_session_ends_with_its_token(broker_factory, tmp_path):
    """KIP-368: the session lifetime is cut to the token's expiry; librdkafka fetches a new
    token and re-authenticates on its connection before then, so producing goes on."""
    issuer = TokenIssuer(tmp_path / "jwks.json")
    b = sasl_broker(broker_factory, sasl_enabled_mechanisms="OAUTHBEARER,PLAIN",
                    sasl_oauthbearer_jwks_endpoint_url=f"file://{issuer.jwks}")
    topic = kit.unique_topic("oauth-reauth")
    kit.create_topic(b.bootstrap, topic, 1)
    p = Producer({"bootstrap.servers": b.sasl_bootstrap, "acks": "all",
                  **oauth_client(lambda: issuer.token(lifetime=4), issuer)})
    before = metric(b, "strata_sasl_authentications_total", mechanism="OAUTHBEARER",
                    result="success")
    deadline = time.monotonic() + 8
    sent = 0
    while time.monotonic() < deadline:
        p.produce(topic, f"o{sent}".encode())
        sent += 1
        p.poll(0.05)
    assert p.flush(30) == 0
    after = metric(b, "strata_sasl_authentications_total", mechanism="OAUTHBEARER",
                   result="success")
    assert after - before >= 3, f"{after - before} authentications over 8 s of 4 s tokens"
    assert metric(b, "strata_sasl_authentications_total", mechanism="OAUTHBEARER",
                  result="failure") == 0
    got = kit.consume_confluent(b.bootstrap, topic, 1)
    assert [m.value() for m in got[0]] == [f"o{i}".encode() for i in range(sent)]
