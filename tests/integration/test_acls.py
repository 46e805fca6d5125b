"""ACLs with Kafka's StandardAuthorizer semantics (authorizer.class.name, super.users,
allow.everyone.if.no.acl.found), managed with kafka-acls (CreateAcls, DescribeAcls, DeleteAcls)
and kept in the metadata store.

Clients authenticate with SASL/PLAIN as alice, bob or admin (a super user). A user without WRITE
cannot produce, without READ on the group cannot consume, without ALTER on the cluster cannot
reassign; a prefixed ALLOW with a literal DENY; Metadata lists only the topics a user may
describe; transactional ids and idempotent writes; every denial goes to the authorizer log;
an ACL added through one broker holds on the others within a second."""
from __future__ import annotations

import json
import subprocess
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

import kit
from ports import free_port

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's listeners")

ACL_CMD = "org.apache.kafka.tools.AclCommand"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")


def acl_config(client_port: int) -> dict:
    """PLAINTEXT for brokers and set-up (ANONYMOUS, a super user here, as Kafka operators make
    the inter-broker principal), CLIENT (SASL_PLAINTEXT) for the users."""
    return {"listeners": f"PLAINTEXT://127.0.0.1:{{port}},CLIENT://127.0.0.1:{client_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},"
                                    f"CLIENT://127.0.0.1:{client_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:SASL_PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.client.plain.sasl.jaas.config": JAAS,
            "authorizer.class.name": AUTHORIZER,
            "super.users": "User:admin;User:ANONYMOUS"}


@pytest.fixture
def acl_broker(broker_factory):
    port = free_port()
    b = broker_factory(config=acl_config(port))
    b.client_bootstrap = f"127.0.0.1:{port}"
    return b


def as_user(user: str) -> dict:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.username": user, "sasl.password": USERS[user]}


def command_config(tmp_path, user: str):
    path = tmp_path / f"{user}.properties"
    path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                    f'required username="{user}" password="{USERS[user]}";\n')
    return path


def tool(main_class: str, *args: str, ok: bool = True) -> str:
    r = subprocess.run(["java", "-Xmx256m", "-cp", f"{kit.KAFKA_LIB}/*", main_class, *args],
                       capture_output=True, text=True, timeout=120, errors="replace")
    out = r.stdout + r.stderr
    if ok:
        assert r.returncode == 0, f"{main_class} {' '.join(args)}:\n{out[-4000:]}"
    return out


def acls(b, tmp_path, *args: str, ok: bool = True) -> str:
    return tool(ACL_CMD, "--bootstrap-server", b.client_bootstrap, "--command-config",
                str(command_config(tmp_path, "admin")), *args, ok=ok)


def produce_error(b, user: str, topic: str, extra: dict | None = None):
    """Produces one record as `user`: None when delivered, else the delivery error."""
    p = Producer({"bootstrap.servers": b.client_bootstrap, "message.timeout.ms": 5000,
                  "enable.idempotence": False, **as_user(user), **(extra or {})})
    errors = []
    p.produce(topic, b"v", on_delivery=lambda err, msg: errors.append(err))
    p.flush(15)
    assert errors, "no delivery report"
    return errors[0]


def consume_error(b, user: str, topic: str, group: str):
    """Reads `topic` as `user` in `group`: None once a record arrives, else the error."""
    c = Consumer({"bootstrap.servers": b.client_bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", **as_user(user)})
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                return m.error()
            return None
        return "nothing read in 20 s"
    finally:
        c.close()


def test_produce_and_consume_need_their_acls(acl_broker, tmp_path):
    b = acl_broker
    topic = kit.unique_topic("acl")
    kit.create_topic(b.bootstrap, topic, 1)
    err = produce_error(b, "alice", topic)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, err
    acls(b, tmp_path, "--add", "--allow-principal", "User:alice", "--operation", "Write",
         "--topic", topic)
    assert produce_error(b, "alice", topic) is None
    err = produce_error(b, "bob", topic)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, err
    # Reading needs READ on the topic and on the group.
    acls(b, tmp_path, "--add", "--allow-principal", "User:bob", "--operation", "Read",
         "--topic", topic)
    err = consume_error(b, "bob", topic, "bobs-group")
    assert err is not None and err.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, err
    acls(b, tmp_path, "--add", "--allow-principal", "User:bob", "--operation", "Read",
         "--group", "bobs-group")
    assert consume_error(b, "bob", topic, "bobs-group") is None
    listed = acls(b, tmp_path, "--list", "--topic", topic)
    assert "User:alice" in listed and "WRITE" in listed and "User:bob" in listed, listed
    # Removed: refused again.
    acls(b, tmp_path, "--remove", "--force", "--allow-principal", "User:alice", "--operation",
         "Write", "--topic", topic)
    err = produce_error(b, "alice", topic)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, err
    kit.wait_until(lambda: f"Principal = User:alice is Denied operation = DESCRIBE from host = 127.0.0.1 on resource = Topic:{topic}" in b.log_tail(),
                   10, "the denial in the authorizer log")


def test_prefixed_allow_with_a_literal_deny_and_metadata_filtering(acl_broker, tmp_path):
    b = acl_broker
    for t in ("orders-eu", "orders-secret", "payments"):
        kit.create_topic(b.bootstrap, t, 1)
    p = Producer({"bootstrap.servers": b.bootstrap})
    for t in ("orders-eu", "orders-secret", "payments"):
        p.produce(t, b"x")
    assert p.flush(15) == 0
    acls(b, tmp_path, "--add", "--allow-principal", "User:alice", "--operation", "Read",
         "--topic", "orders-", "--resource-pattern-type", "prefixed")
    acls(b, tmp_path, "--add", "--deny-principal", "User:alice", "--operation", "Read",
         "--topic", "orders-secret")
    acls(b, tmp_path, "--add", "--allow-principal", "User:*", "--operation", "Read",
         "--group", "g-", "--resource-pattern-type", "prefixed")
    assert consume_error(b, "alice", "orders-eu", "g-1") is None
    err = consume_error(b, "alice", "orders-secret", "g-2")
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, err
    from confluent_kafka.admin import AdminClient
    seen = AdminClient({"bootstrap.servers": b.client_bootstrap, **as_user("alice")}
                       ).list_topics(timeout=10).topics
    # READ (allowed by prefix) implies DESCRIBE; a DENY of READ does not deny DESCRIBE.
    assert sorted(t for t in seen if not t.startswith("__")) == ["orders-eu", "orders-secret"], \
        sorted(seen)
    everything = AdminClient({"bootstrap.servers": b.client_bootstrap, **as_user("admin")}
                             ).list_topics(timeout=10).topics
    assert {"orders-eu", "orders-secret", "payments"} <= set(everything)
    out = acls(b, tmp_path, "--list", "--topic", "orders-", "--resource-pattern-type", "match")
    assert "PREFIXED" in out and "orders-secret" not in out.split("orders-", 1)[0], out


def test_cluster_and_transactional_id_acls(acl_broker, tmp_path):
    b = acl_broker
    topic = kit.unique_topic("acl-txn")
    kit.create_topic(b.bootstrap, topic, 1)
    acls(b, tmp_path, "--add", "--allow-principal", "User:alice", "--operation", "Write",
         "--topic", topic)
    # A transactional producer needs WRITE on its transactional id.
    p = Producer({"bootstrap.servers": b.client_bootstrap, "transactional.id": "tx-alice",
                  **as_user("alice")})
    with pytest.raises(KafkaException) as e:
        p.init_transactions(15)
    assert e.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, e.value
    acls(b, tmp_path, "--add", "--allow-principal", "User:alice", "--operation", "Write",
         "--transactional-id", "tx-alice")
    p = Producer({"bootstrap.servers": b.client_bootstrap, "transactional.id": "tx-alice",
                  **as_user("alice")})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce(topic, b"in-txn")
    p.commit_transaction(30)
    # An idempotent producer with WRITE on some topic is allowed; without any, refused.
    assert produce_error(b, "alice", topic, {"enable.idempotence": True}) is None
    err = produce_error(b, "bob", topic, {"enable.idempotence": True})
    assert err is not None, "bob wrote without any ACL"
    # Reassigning needs ALTER on the cluster.
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [1]}]}))
    out = tool("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server",
               b.client_bootstrap, "--command-config", str(command_config(tmp_path, "alice")),
               "--reassignment-json-file", str(plan), "--execute", ok=False)
    assert "ClusterAuthorizationException" in out or "Cluster authorization failed" in out, out
    acls(b, tmp_path, "--add", "--allow-principal", "User:alice", "--operation", "Alter",
         "--cluster")
    tool("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server",
         b.client_bootstrap, "--command-config", str(command_config(tmp_path, "alice")),
         "--reassignment-json-file", str(plan), "--execute")
    # Creating topics needs CREATE; ACL changes need ALTER on the cluster (alice now has it).
    from confluent_kafka.admin import AdminClient, NewTopic
    bob = AdminClient({"bootstrap.servers": b.client_bootstrap, **as_user("bob")})
    with pytest.raises(KafkaException) as e:
        bob.create_topics([NewTopic("bobs-topic", 1, 1)])["bobs-topic"].result(15)
    assert e.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, e.value
    out = tool(ACL_CMD, "--bootstrap-server", b.client_bootstrap, "--command-config",
               str(command_config(tmp_path, "bob")), "--list", ok=False)
    assert "ClusterAuthorizationException" in out, out


def test_allow_everyone_if_no_acl_found(broker_factory, tmp_path):
    port = free_port()
    b = broker_factory(config={**acl_config(port), "allow.everyone.if.no.acl.found": "true"})
    b.client_bootstrap = f"127.0.0.1:{port}"
    open_topic, guarded = kit.unique_topic("open"), kit.unique_topic("guarded")
    kit.create_topic(b.bootstrap, open_topic, 1)
    kit.create_topic(b.bootstrap, guarded, 1)
    assert produce_error(b, "bob", open_topic) is None  # no ACL at all on it
    acls(b, tmp_path, "--add", "--allow-principal", "User:alice", "--operation", "Write",
         "--topic", guarded)
    err = produce_error(b, "bob", guarded)  # an ACL exists there, none for bob
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, err


def test_an_acl_made_on_one_broker_holds_on_the_others_within_a_second(tmp_path,
                                                                      broker_factory):
    from test_cluster import start_cluster
    ports = {n: free_port() for n in (1, 2, 3)}
    per_node = {n: {k: v for k, v in acl_config(ports[n]).items()
                    if k in ("listeners", "advertised.listeners")} for n in (1, 2, 3)}
    common = {k: v for k, v in acl_config(0).items()
              if k not in ("listeners", "advertised.listeners")}
    etcd, brokers = start_cluster(tmp_path, broker_factory, extra=common, per_node=per_node)
    try:
        b1, b2, b3 = brokers
        for n, b in zip((1, 2, 3), brokers):
            b.client_bootstrap = f"127.0.0.1:{ports[n]}"
        topic = kit.unique_topic("acl-cluster")
        kit.create_topic(b1.bootstrap, topic, 3)
        from confluent_kafka.admin import AdminClient
        clients = {b: AdminClient({"bootstrap.servers": b.client_bootstrap, **as_user("alice")})
                   for b in (b2, b3)}

        def visible(b) -> bool:
            md = clients[b].list_topics(topic, timeout=5)
            return md.topics[topic].error is None

        assert not visible(b2) and not visible(b3)
        started = time.monotonic()
        acls(b1, tmp_path, "--add", "--allow-principal", "User:alice", "--operation",
             "Describe", "--topic", topic)
        added = time.monotonic()
        kit.wait_until(lambda: visible(b2) and visible(b3), 5,
                       "the ACL applied on the other brokers")
        took = time.monotonic() - added
        print(f"ACL visible on brokers 2 and 3 {took:.3f} s after kafka-acls returned "
              f"({added - started:.1f} s for the tool itself)")
        assert took < 1.0, took
        # Deleting through another broker holds everywhere too.
        acls(b2, tmp_path, "--remove", "--force", "--allow-principal", "User:alice",
             "--operation", "Describe", "--topic", topic)
        kit.wait_until(lambda: not visible(b3), 5, "the deletion applied on broker 3")
    finally:
        for b in brokers:
            b.stop()
        etcd.stop_all()


def plain_conn(bootstrap: str, user: str):
    """A raw connection authenticated with SASL/PLAIN as `user` (SaslHandshake v1,
    SaslAuthenticate v2)."""
    import rawkafka as raw
    conn = raw.Conn(bootstrap, timeout=15)
    conn.send(raw.request(17, 1, 1, bytes(raw.Writer().string("PLAIN").buf)))
    assert raw.Reader(conn.recv_frame()[1]).i16() == 0
    token = b"\0" + user.encode() + b"\0" + USERS[user].encode()
    body = raw.Writer(flexible=True).bytes_(token).tags()
    conn.send(raw.request(36, 2, 2, bytes(body.buf), flexible_header=True))
    r = raw.Reader(conn.recv_frame()[1], flexible=True)
    r.skip_tags()  # the response header's
    assert r.i16() == 0, "PLAIN authentication failed"
    return conn


def fetch_v4(conn, correlation_id: int, topics: list[str], replica_id: int = -1,
             max_wait_ms: int = 5000) -> tuple[float, dict]:
    """A Fetch v4 of partition 0 of each topic from offset 0: (seconds until the answer,
    {topic: error code})."""
    import rawkafka as raw
    w = raw.Writer().i32(replica_id).i32(max_wait_ms).i32(1).i32(1 << 20).i8(0)
    w.array(topics, lambda w, t: w.string(t).array([0], lambda w, p: w.i32(p).i64(0).i32(1 << 20)))
    t0 = time.monotonic()
    conn.send(raw.request(1, 4, correlation_id, bytes(w.buf)))
    cid, body = conn.recv_frame()
    took = time.monotonic() - t0
    assert cid == correlation_id
    r = raw.Reader(body)
    r.i32()  # throttle_time_ms
    errors = {}
    for _ in range(r.array_len()):
        topic = r.string()
        for _ in range(r.array_len()):
            r.i32()
            errors[topic] = r.i16()
            r.i64(), r.i64()
            n = r.i32()
            for _ in range(max(n, 0)):
                r.i64(), r.i64()
            r._take(max(r.i32(), 0))
    return took, errors


def test_fetch_refusals_come_per_partition_and_do_not_cut_the_wait(acl_broker, tmp_path):
    """As Kafka's: a consumer's fetch of a topic it may not read, and a follower fetch by a
    principal without CLUSTER_ACTION, get TOPIC_AUTHORIZATION_FAILED on each partition,
    answered at once when nothing is left to read; a denied topic beside a readable one
    does not end the readable one's long poll (max.wait.ms)."""
    b = acl_broker
    readable, denied = kit.unique_topic("acl-fetch-ok"), kit.unique_topic("acl-fetch-denied")
    for t in (readable, denied):
        kit.create_topic(b.bootstrap, t, 1)
    acls(b, tmp_path, "--add", "--allow-principal", "User:alice", "--operation", "Read",
         "--topic", readable)
    conn = plain_conn(b.client_bootstrap, "alice")
    try:
        took, errors = fetch_v4(conn, 10, [denied])
        assert errors == {denied: 29} and took < 4, (took, errors)
        took, errors = fetch_v4(conn, 11, [readable, denied], replica_id=1)
        assert errors == {readable: 29, denied: 29} and took < 4, (took, errors)
        took, errors = fetch_v4(conn, 12, [readable, denied], max_wait_ms=1500)
        assert errors == {readable: 0, denied: 29}, errors
        assert took >= 1.4, f"the long poll ended after {took:.2f}s of max.wait.ms 1.5 s"
    finally:
        conn.close()


def test_authorized_operations_are_what_the_acls_allow(acl_broker, tmp_path):
    """Metadata (librdkafka's describe_topics), DescribeCluster and DescribeGroups answer the
    operations the caller may do, as Kafka's AuthHelper.authorizedOperations: a super user
    all that Kafka supports on the resource, bob what his ACLs give (READ implies DESCRIBE),
    nothing on the cluster without DESCRIBE on it."""
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient
    b = acl_broker
    topic = kit.unique_topic("acl-ops")
    kit.create_topic(b.bootstrap, topic, 1)
    acls(b, tmp_path, "--add", "--allow-principal", "User:bob", "--operation", "Read",
         "--topic", topic)
    acls(b, tmp_path, "--add", "--allow-principal", "User:bob", "--operation", "Describe",
         "--group", "bobs-ops")

    def ops(user: str):
        a = AdminClient({"bootstrap.servers": b.client_bootstrap, **as_user(user)})
        t = a.describe_topics(TopicCollection([topic]), include_authorized_operations=True)
        c = a.describe_cluster(include_authorized_operations=True).result(timeout=30)
        g = a.describe_consumer_groups(["bobs-ops"], include_authorized_operations=True)
        return ({o.name for o in t[topic].result(timeout=30).authorized_operations or []},
                {o.name for o in c.authorized_operations or []},
                {o.name for o in g["bobs-ops"].result(timeout=30).authorized_operations or []})
    topic_ops, cluster_ops, group_ops = ops("bob")
    assert topic_ops == {"READ", "DESCRIBE"}, topic_ops
    assert cluster_ops == set(), cluster_ops
    assert group_ops == {"DESCRIBE"}, group_ops
    topic_ops, cluster_ops, group_ops = ops("admin")
    assert topic_ops == {"READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "ALTER",
                         "DESCRIBE_CONFIGS", "ALTER_CONFIGS"}, topic_ops
    assert cluster_ops == {"CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                           "IDEMPOTENT_WRITE", "ALTER", "DESCRIBE"}, cluster_ops
    assert group_ops == {"READ", "DESCRIBE", "DELETE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"}, \
        group_ops


def test_describe_transactions_lists_only_topics_the_caller_may_describe(acl_broker,
                                                                         tmp_path):
    """kafka-transactions describe, as Kafka's handleDescribeTransactionsRequest: the
    partitions of an open transaction on topics the caller may not DESCRIBE are left out."""
    b = acl_broker
    seen, hidden = kit.unique_topic("txn-seen"), kit.unique_topic("txn-hidden")
    for t in (seen, hidden):
        kit.create_topic(b.bootstrap, t, 1)
    txn_id = kit.unique_topic("acl-txn")
    p = Producer({"bootstrap.servers": b.client_bootstrap, "transactional.id": txn_id,
                  **as_user("admin")})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce(seen, b"a")
    p.produce(hidden, b"b")
    p.flush(30)
    acls(b, tmp_path, "--add", "--allow-principal", "User:bob", "--operation", "Describe",
         "--transactional-id", txn_id)
    acls(b, tmp_path, "--add", "--allow-principal", "User:bob", "--operation", "Read",
         "--topic", seen)

    def describe(user: str) -> str:
        return tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                    b.client_bootstrap, "--command-config",
                    str(command_config(tmp_path, user)), "describe", "--transactional-id",
                    txn_id)
    as_admin = describe("admin")
    assert f"{seen}-0" in as_admin and f"{hidden}-0" in as_admin, as_admin
    as_bob = describe("bob")
    assert f"{seen}-0" in as_bob and f"{hidden}-0" not in as_bob, as_bob
    p.abort_transaction(30)
