"""Network namespaces for cluster tests that cut brokers off (test_network_partition.py,
test_nemesis_mixed.py); needs root for `ip netns`.

Each broker runs in a network namespace of its own, joined by a veth pair to a Linux bridge in
the root namespace, where etcd and the test's clients are. Cutting a broker takes its veth's
bridge end down (the cable pulled: nothing crosses in either direction); healing brings it up
again. Namespaces, veths and the bridge carry a random tag and are removed at teardown.

`net` (fixture): nodes 1-3 on a fresh bridge. `partitioned(net, tmp_path, broker_factory, ...)`
(a context manager): etcd on the bridge and brokers 1-3 in their namespaces.
`partitioned_cluster` (fixture): the same with one etcd member -> (net, etcd, brokers).
"""
from __future__ import annotations

import contextlib
import os
import random
import subprocess
import uuid

import pytest

from etcdkit import Etcd
from kit import wait_until
from ports import free_port
from test_cluster import PREFIX, TTL_MS, metadata


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"ip {' '.join(args)} failed: {r.stderr.strip()}")
    return r


def free_subnet() -> str:
    """A 10.213.X prefix no interface or route of this machine uses yet."""
    used = ip("-4", "-o", "addr").stdout + ip("-4", "route").stdout
    for x in random.sample(range(1, 255), 254):
        if f"10.213.{x}." not in used:
            return f"10.213.{x}"
    raise AssertionError("no free 10.213.X.0/24 subnet")


class Net:
    """A bridge in the root namespace (address `gateway`) and, per node, a network namespace
    joined to it by a veth pair. Names carry a random tag, so runs do not collide."""

    def __init__(self):
        self.tag = uuid.uuid4().hex[:6]
        self.subnet = free_subnet()
        self.gateway = f"{self.subnet}.1"
        self.bridge = f"stbr{self.tag}"
        self.namespaces: list[str] = []
        self.veths: list[str] = []  # bridge ends made
        self.nodes: list[int] = []  # connected

    def netns(self, n: int) -> str:
        return f"strata-{self.tag}-n{n}"

    def address(self, n: int) -> str:
        return f"{self.subnet}.{10 + n}"

    def host_veth(self, n: int) -> str:
        return f"stv{self.tag}h{n}"

    def create_bridge(self) -> None:
        ip("link", "add", self.bridge, "type", "bridge")
        ip("link", "set", self.bridge, "up")
        ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)

    def add_netns(self, n: int, check: bool = True) -> subprocess.CompletedProcess:
        r = ip("netns", "add", self.netns(n), check=check)
        if r.returncode == 0:
            self.namespaces.append(self.netns(n))
        return r

    def connect(self, n: int) -> None:
        """Node n's veth pair: one end on the bridge, the other in its namespace."""
        ns, host, inner = self.netns(n), self.host_veth(n), f"stv{self.tag}n{n}"
        ip("link", "add", host, "type", "veth", "peer", "name", inner)
        self.veths.append(host)
        ip("link", "set", inner, "netns", ns)
        ip("link", "set", host, "master", self.bridge)
        ip("link", "set", host, "up")
        ip("-n", ns, "addr", "add", f"{self.address(n)}/24", "dev", inner)
        ip("-n", ns, "link", "set", inner, "up")
        ip("-n", ns, "link", "set", "lo", "up")
        self.nodes.append(n)

    def cut(self, n: int) -> None:
        ip("link", "set", self.host_veth(n), "down")

    def heal(self, n: int) -> None:
        ip("link", "set", self.host_veth(n), "up")

    def heal_all(self) -> None:
        for n in self.nodes:
            self.heal(n)

    def teardown(self) -> None:
        for veth in self.veths:  # deleting one end deletes the pair
            ip("link", "del", veth, check=False)
        for ns in self.namespaces:
            ip("netns", "del", ns, check=False)
        ip("link", "del", self.bridge, check=False)


@pytest.fixture
def net():
    """Nodes 1-3, each in its namespace on the bridge; all removed at teardown."""
    try:
        n = Net()
    except FileNotFoundError:
        pytest.fail("`ip` (iproute2) is not installed")
    try:
        r = n.add_netns(1, check=False)
        if r.returncode != 0:
            # Only an unprivileged run may skip: the test command runs as root, where a
            # namespace that cannot be made is a broken machine, not a reason to pass.
            message = f"network namespaces not available: {r.stderr.strip()}"
            if os.geteuid() == 0:
                pytest.fail(message)
            pytest.skip(message + " (`ip netns add` needs root)")
        n.add_netns(2)
        n.add_netns(3)
        n.create_bridge()
        for node in (1, 2, 3):
            n.connect(node)
        yield n
    finally:
        n.teardown()


@contextlib.contextmanager
def partitioned(net: Net, tmp_path, broker_factory, etcd_members: int = 1,
                extra: dict | None = None, per_node: dict[int, dict] | None = None):
    """etcd (`etcd_members` members) on the bridge and three brokers, node N in namespace
    net.netns(N) at net.address(N) (Kafka and admin listeners), all registered -> (etcd,
    brokers). `extra` configures every broker, `per_node[n]` broker n on top. On exit the
    network is healed and everything stopped; a broker that does not stop cleanly fails the
    test (broker_factory)."""
    etcd = None
    brokers = []
    try:
        etcd = Etcd(tmp_path / "etcd", members=etcd_members, host=net.gateway)
        for n in (1, 2, 3):
            brokers.append(broker_factory(host=net.address(n), netns=net.netns(n), config={
                "node.id": str(n), "strata.metadata.backend": "etcd",
                "strata.etcd.endpoints": etcd.endpoints, "strata.etcd.prefix": PREFIX,
                "strata.etcd.lease.ttl.ms": str(TTL_MS),
                "strata.etcd.request.timeout.ms": "2000",
                "offsets.topic.num.partitions": "1",
                "strata.admin.listener": f"{net.address(n)}:{free_port()}",
                **(extra or {}), **(per_node or {}).get(n, {})}))
        wait_until(lambda: len(metadata(brokers[0]).brokers) == 3, 15, "3 registered brokers",
                   lambda: metadata(brokers[0]).brokers)
        yield etcd, brokers
    finally:
        net.heal_all()
        for b in brokers:
            b.stop()
        if etcd is not None:
            etcd.stop_all()


@pytest.fixture
def partitioned_cluster(net, tmp_path, broker_factory):
    """etcd (one member) on the bridge and three brokers in their namespaces -> (net, etcd,
    brokers). Healed, stopped and removed at teardown."""
    with partitioned(net, tmp_path, broker_factory) as (etcd, brokers):
        yield net, etcd, brokers
