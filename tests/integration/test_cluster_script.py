"""scripts/cluster.sh, the README's way to try cluster mode: `up 3` starts a real etcd and three
brokers (on free ports here, through its STRATA_*_PORT overrides), `status` shows them registered
with a controller, a real client produces through one broker and consumes through another with
exact records, and `down` stops every process cleanly (a broker SIGKILLed for not stopping would
make it exit non-zero).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import kit
from conftest import free_port

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's cluster mode")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "cluster.sh"


def consecutive_free_ports(n: int) -> int:
    """A base port with n free ports from it (checked, not reserved)."""
    import socket
    for _ in range(50):
        base = free_port()
        socks = []
        try:
            for i in range(n):
                s = socket.socket()
                s.bind(("127.0.0.1", base + i))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError(f"no {n} consecutive free ports")


def test_cluster_script_up_status_down(tmp_path):
    env = dict(os.environ, STRATA_CLUSTER_DIR=str(tmp_path / "cluster"),
               STRATA_ETCD_PORT=str(consecutive_free_ports(2)),
               STRATA_BROKER_PORT=str(consecutive_free_ports(3)),
               STRATA_ADMIN_PORT=str(consecutive_free_ports(3)))
    if "STRATA_BIN" in os.environ:
        env["STRATA_BIN"] = os.path.abspath(os.environ["STRATA_BIN"])

    def run(*args: str, timeout: float = 180) -> str:
        r = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True,
                           timeout=timeout)
        assert r.returncode == 0, f"cluster.sh {' '.join(args)} -> {r.returncode}:\n" \
                                  f"{r.stdout}\n{r.stderr}"
        return r.stdout
    up = run("up", "3")
    try:
        bootstrap = next(line.split()[1] for line in up.splitlines()
                         if line.startswith("bootstrap:"))
        brokers = bootstrap.split(",")
        assert len(brokers) == 3 and all(b.startswith("127.0.0.1:") for b in brokers), up

        def registered() -> str:
            return run("status")
        kit.wait_until(lambda: registered().count('"node_id"') == 3, 30,
                       "three registrations in etcd", registered)
        status = registered()
        assert status.count(": running") == 4, status  # etcd and three brokers
        assert "controller: " in status and status.split("controller: ")[1].strip() in "123", \
            status

        topic = kit.unique_topic("cluster-sh")
        kit.create_topic(brokers[0], topic, 3)
        recs = kit.make_records(90, 3, seed=77, tag="cluster.sh")
        kit.produce_confluent(brokers[1], topic, recs, extra={"acks": "all"})
        kit.assert_same_records(recs, kit.consume_confluent(brokers[2], topic, 3))
    finally:
        down = run("down", timeout=120)
    assert "stopped" in down, down
    after = run("status")
    assert "running" not in after, after


def test_cluster_script_up_secure(tmp_path):
    """`up 3 --secure`: SASL_SSL for clients and between brokers, ACLs, an HTTPS admin API
    with a token; the client settings it writes out work with librdkafka, and the admin API
    refuses a request without the token."""
    import ssl
    import urllib.error
    import urllib.request
    env = dict(os.environ, STRATA_CLUSTER_DIR=str(tmp_path / "cluster"),
               STRATA_ETCD_PORT=str(consecutive_free_ports(2)),
               STRATA_BROKER_PORT=str(consecutive_free_ports(3)),
               STRATA_INTERBROKER_PORT=str(consecutive_free_ports(3)),
               STRATA_ADMIN_PORT=str(consecutive_free_ports(3)))
    if "STRATA_BIN" in os.environ:
        env["STRATA_BIN"] = os.path.abspath(os.environ["STRATA_BIN"])

    def run(*args: str, timeout: float = 180) -> str:
        r = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True,
                           timeout=timeout)
        assert r.returncode == 0, f"cluster.sh {' '.join(args)} -> {r.returncode}:\n" \
                                  f"{r.stdout}\n{r.stderr}"
        return r.stdout
    up = run("up", "3", "--secure")
    try:
        secure = tmp_path / "cluster" / "secure"
        client = {}
        for line in (secure / "librdkafka.properties").read_text().splitlines():
            if line and not line.startswith("#"):
                k, v = line.split("=", 1)
                client[k] = v
        ports = [int(line.split()[2].split(":")[1]) for line in up.splitlines()
                 if line.startswith("broker ")]
        brokers = [f"localhost:{p}" for p in ports]
        from confluent_kafka.admin import AdminClient, NewTopic
        a = AdminClient({"bootstrap.servers": brokers[0], **client})
        topic = kit.unique_topic("cluster-secure")
        a.create_topics([NewTopic(topic, 3, 3)])[topic].result(timeout=30)

        def full_isr():
            parts = a.list_topics(topic, timeout=10).topics[topic].partitions
            return len(parts) == 3 and all(len(p.isrs) == 3 for p in parts.values())
        kit.wait_until(full_isr, 60, "a full ISR over the SASL_SSL inter-broker listener")
        recs = kit.make_records(60, 3, seed=78, tag="cluster.sh secure")
        kit.produce_confluent(brokers[1], topic, recs, extra={"acks": "all", **client})
        kit.assert_same_records(recs, kit.consume_confluent(brokers[2], topic, 3, extra=client))
        admin = next(line.split()[4] for line in up.splitlines() if line.startswith("broker 1"))
        assert admin.startswith("https://"), up
        context = ssl.create_default_context(cafile=str(secure / "ca.pem"))
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(admin.replace("127.0.0.1", "localhost") + "v1/cluster",
                                   context=context, timeout=10)
        assert e.value.code == 401
        token = (secure / "admin-tokens").read_text().split()[0]
        req = urllib.request.Request(admin.replace("127.0.0.1", "localhost") + "v1/cluster",
                                     headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, context=context, timeout=10) as r:
            assert r.status == 200
    finally:
        down = run("down", timeout=120)
    assert "stopped" in down, down
