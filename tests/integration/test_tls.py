"""TLS listeners (security.protocol SSL) with Kafka's ssl.* keys: a broker listens on
PLAINTEXT and on SSL (a PEM keystore, or an encrypted PEM key with ssl.key.password, or
PKCS12), and librdkafka clients produce and consume over SSL, every record's bytes back
identical (fetch data goes through TLS, not sendfile). Refused, with the broker serving
everyone else: a client that does not trust the broker's CA, a plaintext client on the SSL
port, and with ssl.client.auth=required a client without a certificate (mTLS; with one it
works). Three brokers replicating, forwarding and writing transaction markers over an SSL
inter-broker listener with mutual TLS. Kafka's own tools (kafka-topics, kafka-get-offsets: the Java client) over SSL with a
--command-config file, verifying the broker's hostname as Java does by default. A keystore that
cannot be opened stops start-up with a message naming the setting. A listener's keystore
replaced with kafka-configs, or rewritten in place, without a restart. Tiered data read back
over SSL, from the fetched chunks' buffers and from the chunk cache's files."""
from __future__ import annotations

import subprocess

import pytest
from confluent_kafka import Producer

import conftest

import kit
import rawkafka as raw
from certs import CA
from ports import free_port

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's listeners")


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return CA(tmp_path_factory.mktemp("certs"))


def tls_broker(broker_factory, ca, **ssl):
    """A broker with PLAINTEXT on its usual port and SSL on another (advertised as localhost,
    which its certificate names); `ssl` adds settings (underscores for dots)."""
    ssl_port = free_port()
    config = {"listeners": f"PLAINTEXT://127.0.0.1:{{port}},SSL://127.0.0.1:{ssl_port}",
              "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},SSL://localhost:{ssl_port}",
              "inter.broker.listener.name": "PLAINTEXT"}
    config.update({k.replace("_", "."): str(v) for k, v in ssl.items()})
    b = broker_factory(config=config)
    b.ssl_bootstrap = f"localhost:{ssl_port}"
    return b


def ssl_client(ca_file, cert=None) -> dict:
    conf = {"security.protocol": "SSL", "ssl.ca.location": str(ca_file)}
    if cert is not None:
        conf.update({"ssl.certificate.location": str(cert.cert),
                     "ssl.key.location": str(cert.key)})
    return conf


def round_trip(b, client: dict, n: int = 500) -> None:
    """Produces `n` records over `client` settings and reads them back the same way."""
    topic = kit.unique_topic("tls")
    kit.create_topic(b.bootstrap, topic, 2)
    recs = kit.make_records(n, 2, seed=5, tag="tls", value_size=4000)
    kit.produce_confluent(b.ssl_bootstrap, topic, recs, extra=client)
    got = kit.consume_confluent(b.ssl_bootstrap, topic, 2, extra=client)
    assert sorted((p, m.offset(), m.key(), m.value()) for p, ms in got.items() for m in ms) == \
        sorted((r.partition, r.offset, r.key, r.value) for r in recs)


def alter_broker_config_raw(bootstrap: str, broker: str, key: str,
                            value: str) -> tuple[int, str | None]:
    """IncrementalAlterConfigs v0 SET `key`=`value` for broker resource `broker`, sent to
    `bootstrap` whatever broker that is: the resource's (error code, message)."""
    body = raw.Writer().array([0], lambda w, _: (
        w.i8(4).string(broker).array([0], lambda w2, _: w2.string(key).i8(0).string(value))))
    body.boolean(False)
    with raw.Conn(bootstrap) as c:
        c.send(raw.request(44, 0, 1, bytes(body.buf)))
        _, data = c.recv_frame()
    r = raw.Reader(data)
    r.i32()  # throttle
    assert r.array_len() == 1
    return r.i16(), r.string()


def refused(b, client: dict) -> str:
    """A producer with `client` settings cannot deliver to an existing topic over the SSL
    listener (which a trusted client can): its error."""
    topic = kit.unique_topic("refused")
    kit.create_topic(b.bootstrap, topic, 1)
    p = Producer({"bootstrap.servers": b.ssl_bootstrap, "message.timeout.ms": 4000,
                  "socket.timeout.ms": 3000, **client})
    errors = []
    p.produce(topic, b"x", on_delivery=lambda err, msg: errors.append(err))
    p.flush(15)
    assert errors and errors[0] is not None, "delivered over an SSL connection it must not get"
    assert errors[0].code() in (-195, -192, -185), errors[0]  # _TRANSPORT, _MSG_TIMED_OUT, _TIMED_OUT
    return str(errors[0])


def test_clients_produce_and_consume_over_ssl(broker_factory, ca):
    broker_cert = ca.issue("broker", "localhost")
    b = tls_broker(broker_factory, ca, ssl_keystore_location=broker_cert.keystore)
    round_trip(b, ssl_client(ca.cert))
    # Metadata over SSL names the SSL endpoints; over PLAINTEXT the PLAINTEXT ones.
    from confluent_kafka.admin import AdminClient
    ssl_md = AdminClient({"bootstrap.servers": b.ssl_bootstrap, **ssl_client(ca.cert)}
                         ).list_topics(timeout=10)
    assert [(x.host, x.port) for x in ssl_md.brokers.values()] == \
        [("localhost", int(b.ssl_bootstrap.split(":")[1]))]
    plain_md = kit.admin(b.bootstrap).list_topics(timeout=10)
    assert [(x.host, x.port) for x in plain_md.brokers.values()] == [("127.0.0.1", b.port)]


def test_tiered_data_is_read_back_over_ssl(broker_factory, ca, tmp_path):
    """Records only in remote storage reach an SSL client as they were produced: on the first
    read from the buffers the chunks were fetched into, on the second from the chunk cache's
    files (both copied through TLS rather than sent with sendfile), with batches crossing
    chunk boundaries (64 KiB chunks)."""
    broker_cert = ca.issue("broker-tiered", "localhost")
    remote = tmp_path / "remote"
    remote.mkdir()
    admin = f"127.0.0.1:{free_port()}"
    b = tls_broker(broker_factory, ca, ssl_keystore_location=broker_cert.keystore, **{
        "strata_admin_listener": admin,
        "remote_log_storage_system_enable": "true",
        "strata_remote_storage_uri": f"file://{remote}",
        "strata_remote_cache_chunk_bytes": 64 * 1024,
        "remote_log_manager_task_interval_ms": 300,
        "log_retention_check_interval_ms": 300})
    client = ssl_client(ca.cert)
    topic = kit.unique_topic("tls-tiered")
    kit.create_topic(b.bootstrap, topic, 2, config={
        "remote.storage.enable": "true", "segment.bytes": str(256 * 1024),
        "local.retention.bytes": "1", "retention.ms": "-1"})
    recs = kit.make_records(1200, 2, seed=17, tag="tls-tiered", value_size=4000)
    # (Batches well under segment.bytes, which a batch may not exceed.)
    kit.produce_confluent(b.ssl_bootstrap, topic, recs, extra={**client, "batch.size": 65536})

    def oldest_local() -> dict:
        return {p: min(int(f.stem) for f in b.partition_dir(topic, p).glob("*.log"))
                for p in range(2)}
    # Only the active segment is left locally: everything before it is read remotely.
    kit.wait_until(lambda: all(o > 0 for o in oldest_local().values()), 60,
               "every partition's rolled segments uploaded and deleted locally", oldest_local)
    want = sorted((r.partition, r.offset, r.key, r.value) for r in recs)

    def metric(name: str) -> float:
        import urllib.request
        text = urllib.request.urlopen(f"http://{admin}/metrics", timeout=10).read().decode()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith(name + " ") or line.startswith(name + "{"))
    for attempt in ("fetched chunks", "cached chunks"):
        reads = metric("strata_remote_reads_total")
        got = kit.consume_confluent(b.ssl_bootstrap, topic, 2, extra=client)
        assert sorted((p, m.offset(), m.key(), m.value()) for p, ms in got.items()
                      for m in ms) == want, attempt
        assert metric("strata_remote_reads_total") > reads, f"{attempt}: no remote read"
    assert metric("strata_remote_cache_hits_total") > 0


def test_untrusted_and_plaintext_clients_are_refused_and_others_served(broker_factory, ca,
                                                                       tmp_path):
    broker_cert = ca.issue("broker2", "localhost")
    b = tls_broker(broker_factory, ca, ssl_keystore_location=broker_cert.keystore)
    other = CA(tmp_path / "other", "Another CA")
    err = refused(b, ssl_client(other.cert))
    print("untrusted CA:", err)
    # A plaintext Kafka client on the SSL port: its ApiVersions is not a TLS handshake.
    with raw.Conn(b.ssl_bootstrap, timeout=10) as conn:
        conn.send(raw.request(18, 0, 1))
        conn.wait_closed(10)  # closed by the broker, with no Kafka answer
    kit.wait_until(lambda: "TLS handshake failed" in b.log_tail(), 10,
                   "the refused handshakes logged")
    round_trip(b, ssl_client(ca.cert), n=50)  # still serving
    kit.create_topic(b.bootstrap, kit.unique_topic("plain"), 1)  # and the PLAINTEXT listener


def test_mutual_tls_requires_a_client_certificate(broker_factory, ca):
    broker_cert = ca.issue("broker3", "localhost")
    client_cert = ca.issue("client", "app-1", san="DNS:app-1")
    b = tls_broker(broker_factory, ca, ssl_keystore_location=broker_cert.keystore,
                   listener_name_ssl_ssl_client_auth="required",
                   listener_name_ssl_ssl_truststore_location=ca.cert)
    print("no client certificate:", refused(b, ssl_client(ca.cert)))
    round_trip(b, ssl_client(ca.cert, client_cert), n=50)


def test_encrypted_pem_and_pkcs12_keystores(broker_factory, ca):
    broker_cert = ca.issue("broker4", "localhost")
    b = tls_broker(broker_factory, ca,
                   ssl_keystore_location=ca.encrypted_keystore(broker_cert, "k3y-pass"),
                   ssl_key_password="k3y-pass")
    round_trip(b, ssl_client(ca.cert), n=50)
    b.stop()
    b = tls_broker(broker_factory, ca, ssl_keystore_type="PKCS12",
                   ssl_keystore_location=ca.pkcs12(broker_cert, "p12-pass"),
                   ssl_keystore_password="p12-pass",
                   ssl_enabled_protocols="TLSv1.3")
    round_trip(b, ssl_client(ca.cert), n=50)


def test_a_keystore_that_cannot_be_opened_stops_start_up(tmp_path, ca):
    broker_cert = ca.issue("broker5", "localhost")
    cases = {
        "wrong key password": {"ssl.keystore.location":
                               ca.encrypted_keystore(broker_cert, "right"),
                               "ssl.key.password": "wrong"},
        "no keystore": {},
        "JKS": {"ssl.keystore.type": "JKS", "ssl.keystore.location": broker_cert.keystore},
    }
    for name, ssl in cases.items():
        props = tmp_path / f"{name.replace(' ', '-')}.properties"
        lines = [f"listeners=PLAINTEXT://127.0.0.1:{free_port()},SSL://127.0.0.1:{free_port()}",
                 f"log.dirs={tmp_path / 'data'}"] + [f"{k}={v}" for k, v in ssl.items()]
        props.write_text("\n".join(lines) + "\n")
        r = subprocess.run([conftest.STRATA_BIN, "serve", "--config", str(props)],
                           capture_output=True, text=True, timeout=60)
        out = r.stdout + r.stderr
        assert r.returncode != 0, f"{name}: started\n{out[-3000:]}"
        assert "listener SSL" in out and "ssl." in out, f"{name}:\n{out[-3000:]}"


def test_kafka_tools_over_ssl_with_a_command_config(broker_factory, ca, tmp_path):
    if not list(kit.KAFKA_LIB.glob("kafka-tools-*.jar")):
        pytest.fail(f"Kafka tool jars missing in {kit.KAFKA_LIB}: run scripts/install-test-deps.sh")
    broker_cert = ca.issue("broker6", "localhost")
    b = tls_broker(broker_factory, ca, ssl_keystore_location=broker_cert.keystore)
    client = tmp_path / "client.properties"
    client.write_text("security.protocol=SSL\nssl.truststore.type=PEM\n"
                      f"ssl.truststore.location={ca.cert}\n")
    topic = kit.unique_topic("tls-tools")

    def tool(main_class: str, *args: str) -> str:
        r = subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*", main_class,
                            "--bootstrap-server", b.ssl_bootstrap, "--command-config", str(client),
                            *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{main_class} {args}:\n{r.stdout}\n{r.stderr[-4000:]}"
        return r.stdout
    tool("org.apache.kafka.tools.TopicCommand", "--create", "--topic", topic,
         "--partitions", "3", "--replication-factor", "1")
    assert topic in tool("org.apache.kafka.tools.TopicCommand", "--list").split()
    recs = kit.make_records(30, 3, seed=9, tag="tls-tools", nulls=False)
    kit.produce_confluent(b.ssl_bootstrap, topic, recs, extra=ssl_client(ca.cert))
    out = tool("org.apache.kafka.tools.GetOffsetShell", "--topic", topic)
    assert sorted(out.split()) == sorted(f"{topic}:{p}:10" for p in range(3)), out


def served_certificate(bootstrap: str, ca_file) -> bytes:
    """The DER certificate a new TLS connection to `bootstrap` is given."""
    import socket
    import ssl
    host, port = bootstrap.rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(ca_file))
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        with context.wrap_socket(sock, server_hostname=host) as tls:
            return tls.getpeercert(binary_form=True)


def der(cert) -> bytes:
    import ssl
    return ssl.PEM_cert_to_DER_cert(cert.cert.read_text())


def test_a_listeners_keystore_is_replaced_without_a_restart(broker_factory, ca, tmp_path):
    """kafka-configs --entity-type brokers --alter --add-config
    listener.name.ssl.ssl.keystore.location=<new keystore>, as Kafka operators rotate
    certificates (KIP-226): new connections get the new certificate while a producer's open
    connection goes on; a keystore that cannot load, or names another subject, is refused
    with Kafka's message and the old certificate kept; a keystore rewritten in place is
    picked up by itself."""
    from test_kafka_tools import CONFIG_CMD
    first = ca.issue("rotate-1", "localhost")
    b = tls_broker(broker_factory, ca, ssl_keystore_location=first.keystore)
    assert served_certificate(b.ssl_bootstrap, ca.cert) == der(first)
    topic = kit.unique_topic("rotate")
    kit.create_topic(b.bootstrap, topic, 1)
    p = Producer({"bootstrap.servers": b.ssl_bootstrap, "acks": "all", **ssl_client(ca.cert)})
    sent = [f"r{i}".encode() for i in range(40)]
    for v in sent[:20]:
        p.produce(topic, v)
    assert p.flush(30) == 0

    def configs(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*", CONFIG_CMD,
                               "--bootstrap-server", b.bootstrap, "--entity-type", "brokers",
                               "--entity-name", "1", *args],
                              capture_output=True, text=True, timeout=120)
    key = "listener.name.ssl.ssl.keystore.location"
    second = ca.issue("rotate-2", "localhost")
    r = configs("--alter", "--add-config", f"{key}={second.keystore}")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    kit.wait_until(lambda: served_certificate(b.ssl_bootstrap, ca.cert) == der(second), 10,
                   "new connections given the new certificate")
    for v in sent[20:]:
        p.produce(topic, v)
    assert p.flush(30) == 0
    got = kit.consume_confluent(b.ssl_bootstrap, topic, 1, extra=ssl_client(ca.cert))
    assert [m.value() for m in got[0]] == sent
    r = configs("--describe")
    assert f"{key}={second.keystore}" in r.stdout, r.stdout + r.stderr[-3000:]

    # Refused, the certificate kept: another subject, a file that is not there, and a
    # cluster-wide default (keystores are per broker).
    other = ca.issue("rotate-other", "someone-else")
    for value, why in [(other.keystore, "Keystore DistinguishedName does not match"),
                       (tmp_path / "missing.pem", "cannot read")]:
        r = configs("--alter", "--add-config", f"{key}={value}")
        out = r.stdout + r.stderr
        assert r.returncode != 0 and why in out, out[-3000:]
    r = subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*", CONFIG_CMD,
                        "--bootstrap-server", b.bootstrap, "--entity-type", "brokers",
                        "--entity-default", "--alter", "--add-config", f"{key}={second.keystore}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "broker id must be specified" in r.stdout + r.stderr, \
        (r.stdout + r.stderr)[-3000:]
    # Sent to a broker it is not for: only that broker can check its keystore (Kafka answers
    # INVALID_REQUEST; its admin client routes broker configs to the broker itself).
    code, message = alter_broker_config_raw(b.bootstrap, "7", key, str(second.keystore))
    assert (code, message) == (42, "Unexpected broker id, expected 1, but received 7")
    assert served_certificate(b.ssl_bootstrap, ca.cert) == der(second)

    # Renewed in place (same path, new contents), as cert-manager and the like do.
    third = ca.issue("rotate-3", "localhost")
    second.keystore.write_text(third.keystore.read_text())
    kit.wait_until(lambda: served_certificate(b.ssl_bootstrap, ca.cert) == der(third), 15,
                   "the rewritten keystore picked up")
    assert "TLS keystore and truststore reloaded" in b.log_tail()


def test_brokers_replicate_over_an_ssl_inter_broker_listener(tmp_path, broker_factory, ca):
    """Three brokers whose inter-broker listener is SSL with mutual TLS (each presents its
    keystore and checks its peers' against the truststore and their host name): replication,
    forwarding and transaction markers all cross it, so an RF=3 topic keeps its full ISR, a
    transaction commits, and every record reads back."""
    from confluent_kafka import Producer as TxnProducer
    from confluent_kafka.admin import NewTopic
    from test_cluster import start_cluster
    from test_listeners import connections
    cert = ca.issue("peer", "localhost")
    ports = {n: free_port() for n in (1, 2, 3)}
    per_node = {n: {"listeners": f"PLAINTEXT://127.0.0.1:{{port}},BROKER://127.0.0.1:{ports[n]}",
                    "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},"
                                            f"BROKER://localhost:{ports[n]}"}
                for n in (1, 2, 3)}
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,BROKER:SSL",
        "inter.broker.listener.name": "BROKER",
        "ssl.keystore.location": str(cert.keystore),
        "ssl.truststore.location": str(ca.cert),
        "listener.name.broker.ssl.client.auth": "required"}, per_node=per_node)
    try:
        b1, b2, b3 = brokers
        topic = kit.unique_topic("tls-peers")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 3, 3, config={"min.insync.replicas": "2"})]
                        )[topic].result(timeout=30)

        def full_isr():
            parts = a.list_topics(topic, timeout=10).topics[topic].partitions
            return len(parts) == 3 and all(len(p.isrs) == 3 for p in parts.values())
        kit.wait_until(full_isr, 60, "a full ISR over the SSL inter-broker listener")
        for b in (b1, b2, b3):
            assert connections(b, "BROKER") > 0
        plain = Producer({"bootstrap.servers": b2.bootstrap, "acks": "all"})
        for i in range(200):
            plain.produce(topic, value=f"rec-{i}".encode(), partition=i % 3)
        assert plain.flush(60) == 0
        p = TxnProducer({"bootstrap.servers": b3.bootstrap, "transactional.id": "tls-peers"})
        p.init_transactions(60)
        p.begin_transaction()
        for i in range(30):
            p.produce(topic, value=f"txn-{i}".encode(), partition=i % 3)
        p.commit_transaction(60)
        from test_transactions import list_offsets, read
        tps = [(topic, i) for i in range(3)]
        ends = kit.wait_until(
            lambda: (lambda lso, hw: lso == hw and hw)(list_offsets(b1.bootstrap, tps, True),
                                                       list_offsets(b1.bootstrap, tps, False)),
            30, "the transaction's markers written over the SSL listener")
        got = read(b1.bootstrap, tps, "read_committed", ends)
        values = sorted(v for recs_ in got.values() for _, v in recs_)
        want = [f"rec-{i}" for i in range(200)] + [f"txn-{i}" for i in range(30)]
        assert values == sorted(want)
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def test_inter_broker_certificates_move_to_a_new_ca_without_a_restart(tmp_path, broker_factory,
                                                                      ca):
    """Three brokers replicating over an SSL inter-broker listener with mutual TLS move to a
    new CA as operators do it, with IncrementalAlterConfigs sent to each broker and no restart:
    trust both CAs, then a keystore the new CA issued, then trust only the new CA. Brokers
    connect to each other with the listener's keystore and truststore as they are now, so
    after the last step (when an old certificate would be refused) a restarted broker is
    replicated to and from: it rejoins the ISR, takes its preferred partition back, and
    acks=all produces to it are acknowledged by both followers."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic
    from test_cluster import start_cluster
    new_ca = CA(tmp_path / "new-ca", name="Strata Test CA 2")
    old_cert, new_cert = ca.issue("ib-old", "localhost"), new_ca.issue("ib-new", "localhost")
    both = tmp_path / "both-cas.pem"
    both.write_text(ca.cert.read_text() + new_ca.cert.read_text())
    ports = {n: free_port() for n in (1, 2, 3)}
    per_node = {n: {"listeners": f"PLAINTEXT://127.0.0.1:{{port}},BROKER://127.0.0.1:{ports[n]}",
                    "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},"
                                            f"BROKER://localhost:{ports[n]}"}
                for n in (1, 2, 3)}
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,BROKER:SSL",
        "inter.broker.listener.name": "BROKER",
        "ssl.keystore.location": str(old_cert.keystore),
        "ssl.truststore.location": str(ca.cert),
        "listener.name.broker.ssl.client.auth": "required",
        "leader.imbalance.check.interval.seconds": "1"}, per_node=per_node)
    try:
        b1, b2, b3 = brokers
        topic = kit.unique_topic("ib-rotate")
        a = kit.admin(b1.bootstrap)
        a.create_topics([NewTopic(topic, 3, replica_assignment=[[3, 1, 2], [1, 2, 3], [2, 3, 1]],
                                  config={"min.insync.replicas": "3"})])[topic].result(timeout=30)

        def leaders_and_isrs():
            parts = a.list_topics(topic, timeout=10).topics[topic].partitions
            return {p: (m.leader, sorted(m.isrs)) for p, m in parts.items()}

        settled = {0: (3, [1, 2, 3]), 1: (1, [1, 2, 3]), 2: (2, [1, 2, 3])}
        kit.wait_until(lambda: leaders_and_isrs() == settled, 60,
                       "preferred leaders and full ISRs over the SSL listener", leaders_and_isrs)

        def set_on_each(key: str, value) -> None:
            for n, b in zip((1, 2, 3), brokers):
                res = ConfigResource(ConfigResource.Type.BROKER, str(n), incremental_configs=[
                    ConfigEntry(f"listener.name.broker.ssl.{key}", str(value),
                                incremental_operation=AlterConfigOpType.SET)])
                broker_admin = kit.admin(b.bootstrap)  # kept: the future needs its handle
                broker_admin.incremental_alter_configs([res])[res].result(30)

        set_on_each("truststore.location", both)
        set_on_each("keystore.location", new_cert.keystore)
        set_on_each("truststore.location", new_ca.cert)

        b3.restart()
        kit.wait_until(lambda: leaders_and_isrs() == settled, 90,
                       "broker 3 back in every ISR and leading partition 0 again",
                       leaders_and_isrs)
        p = Producer({"bootstrap.servers": b1.bootstrap, "acks": "all",
                      "message.timeout.ms": 20000})
        failed = []
        for i in range(60):
            p.produce(topic, value=f"after-{i}".encode(), partition=i % 3,
                      on_delivery=lambda err, msg: err and failed.append((msg.partition(), err)))
        assert p.flush(40) == 0 and not failed, failed[:3]
        got = kit.consume_confluent(b1.bootstrap, topic, 3)
        assert sorted(m.value() for ms in got.values() for m in ms) == \
            sorted(f"after-{i}".encode() for i in range(60)), \
            ({p_: [m.value() for m in ms] for p_, ms in got.items()}, leaders_and_isrs())
        assert "TLS keystore and truststore reloaded" in b1.log_text()
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()
