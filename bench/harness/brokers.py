"""Starting and stopping the two systems under test, each on a fresh data dir:
Strata (`strata serve --set ...`) and Apache Kafka (bench/kafka/pom.xml's version) as one KRaft
combined node (broker+controller, node.id=1, its own controller port, storage formatted
--standalone).

Both get the same segment size (1 GiB, the default of both), PLAINTEXT on 127.0.0.1 and no
per-message fsync (the defaults); everything else is each system's own default.

Cluster variants (bench/replication.py): `KafkaCluster`, n combined KRaft nodes with a static
`controller.quorum.voters` and one shared cluster id, internal topics at Kafka's default
replication factor (3); `StrataCluster`, one etcd (as scripts/cluster.sh starts it) and n Strata
brokers with `strata.metadata.backend=etcd`. A node of either can be SIGKILLed (`kill`) and
started again on its data (`restart`).
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from . import kadmin, procs

SEGMENT_BYTES = 1 << 30
# What bin/kafka-server-start.sh + kafka-run-class.sh give a broker, with the 1 GiB heap.
KAFKA_JVM = ["-Xmx1g", "-Xms1g", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
             "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
             "-Djava.awt.headless=true"]
LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = STDERR
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = STDERR
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """One running system under test. `bootstrap`, `pid`, `config` (dict), `log_path`.
    Not thread-safe."""

    name = "?"

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.log_path = workdir / "broker.log"
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.config: dict[str, str] = {}
        self.exit_code: int | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def fresh_data_dir(self) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)
        self.data_dir.mkdir(parents=True)

    def stop(self) -> None:
        if self.proc is not None:
            self.exit_code = procs.stop(self.proc, grace=30.0)
            self.proc = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> float:
        """SIGKILL (a crash); returns the monotonic time of the signal."""
        t = procs.kill9(self.proc)
        self.exit_code = self.proc.returncode
        self.proc = None
        return t

    def restart(self, timeout: float = 180) -> None:
        """Starts the broker again on the data it has (after `kill` or `stop`)."""
        self.launch(fresh=False)
        self.wait_ready(timeout)

    def start(self) -> None:
        self.launch(fresh=True)
        self.wait_ready(self.start_timeout)

    def launch(self, fresh: bool) -> None:
        raise NotImplementedError

    def wait_ready(self, timeout: float, brokers: int = 1) -> None:
        self._wait(timeout, brokers)

    def check_alive(self, during: str) -> None:
        """Raises if the broker process has exited (e.g. crashed during a workload)."""
        if self.proc is not None and self.proc.poll() is not None:
            self.exit_code = self.proc.returncode
            raise RuntimeError(f"{self.name} exited with code {self.exit_code} during {during}; "
                               f"see {self.log_path}")

    def wipe(self) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def _wait(self, timeout: float, brokers: int = 1) -> None:
        try:
            kadmin.wait_ready(self.bootstrap, timeout, brokers)
        except kadmin.KafkaError:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode} at start-up; "
                                   f"see {self.log_path}") from None
            raise


class StrataBroker(Broker):
    name = "strata"
    start_timeout = 30

    def __init__(self, workdir: Path, binary: Path, node_id: int = 1,
                 extra: dict[str, str] | None = None):
        super().__init__(workdir)
        self.binary = binary
        self.node_id = node_id
        self.config = {
            "node.id": str(node_id),
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.data_dir),
            "log.segment.bytes": str(SEGMENT_BYTES),
            **(extra or {}),
        }

    def launch(self, fresh: bool) -> None:
        if fresh:
            self.fresh_data_dir()
        cmd = [str(self.binary), "serve"]
        for k, v in self.config.items():
            cmd += ["--set", f"{k}={v}"]
        self.command = cmd
        self.proc = procs.spawn(cmd, self.log_path, cwd=self.workdir)


class KafkaBroker(Broker):
    """One KRaft combined node. Alone (voters=None): node.id 1, storage formatted --standalone,
    internal topics at RF 1. In a cluster: the given node id and static quorum voters, storage
    formatted with the cluster's id, Kafka's defaults for the internal topics (RF 3)."""

    name = "kafka"
    start_timeout = 180

    def __init__(self, workdir: Path, lib_dir: Path, node_id: int = 1, cport: int | None = None,
                 voters: str | None = None):
        super().__init__(workdir)
        self.lib_dir = lib_dir
        self.node_id = node_id
        self.cport = cport or free_port()
        self.cluster_id: str | None = None
        self.config = {
            "process.roles": "broker,controller",
            "node.id": str(node_id),
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.cport}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "log.segment.bytes": str(SEGMENT_BYTES),
        }
        if voters:
            self.config["controller.quorum.voters"] = voters
        else:
            self.config.update({
                "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.cport}",
                # A single node cannot hold 3 replicas of the internal topics.
                "offsets.topic.replication.factor": "1",
                "transaction.state.log.replication.factor": "1",
                "transaction.state.log.min.isr": "1",
                "share.coordinator.state.topic.replication.factor": "1",
                "share.coordinator.state.topic.min.isr": "1",
            })

    def _java(self, main: str, *args: str, jvm: list[str] | None = None) -> list[str]:
        log4j = self.workdir / "log4j2.properties"
        log4j.write_text(LOG4J2)
        return ["java", *(jvm or []), f"-Dlog4j2.configurationFile={log4j}",
                "-cp", f"{self.lib_dir}/*", main, *args]

    def random_uuid(self) -> str:
        self.workdir.mkdir(parents=True, exist_ok=True)
        rc, out = procs.run_logged(self._java("kafka.tools.StorageTool", "random-uuid"),
                                   self.workdir / "format.log", 120)
        cluster_id = out.strip().splitlines()[-1].strip()
        if rc != 0 or len(cluster_id) != 22:
            raise RuntimeError(f"kafka-storage random-uuid failed: {out[-2000:]}")
        return cluster_id

    def launch(self, fresh: bool) -> None:
        props = self.workdir / "server.properties"
        if fresh:
            self.fresh_data_dir()
            props.write_text("".join(f"{k}={v}\n" for k, v in self.config.items()))
            cluster_id = self.cluster_id or self.random_uuid()
            standalone = [] if "controller.quorum.voters" in self.config else ["--standalone"]
            rc, out = procs.run_logged(self._java("kafka.tools.StorageTool", "format", "-t",
                                                  cluster_id, "-c", str(props), *standalone),
                                       self.workdir / "format.log", 120)
            if rc != 0:
                raise RuntimeError(f"kafka-storage format failed: {out[-2000:]}")
        cmd = self._java("kafka.Kafka", str(props), jvm=KAFKA_JVM)
        self.command = cmd
        self.proc = procs.spawn(cmd, self.log_path, cwd=self.workdir)


class Etcd:
    """One etcd member (Debian's etcd-server) with scripts/cluster.sh's flags, on free ports."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.log_path = workdir / "etcd.log"
        self.port, self.peer = free_port(), free_port()
        self.endpoint = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        client, peer = f"http://127.0.0.1:{self.port}", f"http://127.0.0.1:{self.peer}"
        self.command = [
            "etcd", "--name", "strata", "--data-dir", str(self.data_dir),
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"strata={peer}",
            "--auto-compaction-mode", "revision", "--auto-compaction-retention", "10000",
            "--log-level", "warn"]

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self, timeout: float = 30) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc = procs.spawn(self.command, self.log_path, cwd=self.workdir)
        deadline = time.time() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"etcd did not come up on {self.endpoint}; "
                                       f"see {self.log_path}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None:
            procs.stop(self.proc, grace=15.0)
            self.proc = None

    def wipe(self) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)


class Cluster:
    """n nodes of one system on loopback. `nodes` (node ids 1..n), `bootstrap` (all of them),
    `processes()` (name -> pid of every process the system runs, for sampling). Not
    thread-safe."""

    name = "?"

    def __init__(self, nodes: list[Broker]):
        self.nodes = nodes
        self.bootstrap = ",".join(b.bootstrap for b in nodes)

    def node(self, node_id: int) -> Broker:
        return self.nodes[node_id - 1]

    def live_bootstrap(self) -> str:
        """One broker that is up, for admin calls while another is down."""
        for b in self.nodes:
            if b.running:
                return b.bootstrap
        raise RuntimeError(f"{self.name}: no broker running")

    def processes(self) -> dict[str, int]:
        return {f"broker {b.node_id}": b.pid for b in self.nodes if b.running}

    def check_alive(self, during: str) -> None:
        for b in self.nodes:
            b.check_alive(during)

    def stop(self) -> None:
        """All nodes at once (SIGTERM, SIGKILL after 30 s)."""
        running = [b for b in self.nodes if b.proc is not None]
        procs.stop_many([b.proc for b in running], grace=30.0)
        for b in running:
            b.exit_code = b.proc.returncode
            b.proc = None

    def wipe(self) -> None:
        for b in self.nodes:
            b.wipe()

    @property
    def config(self) -> dict:
        return {f"node {b.node_id}": b.config for b in self.nodes}

    @property
    def commands(self) -> dict:
        return {f"node {b.node_id}": getattr(b, "command", []) for b in self.nodes}


class KafkaCluster(Cluster):
    """n Kafka 4.x KRaft combined nodes (process.roles=broker,controller on each), static
    controller.quorum.voters, storage formatted with one shared cluster id."""

    name = "kafka"

    def __init__(self, workdir: Path, lib_dir: Path, n: int = 3):
        cports = [free_port() for _ in range(n)]
        voters = ",".join(f"{i + 1}@127.0.0.1:{c}" for i, c in enumerate(cports))
        super().__init__([KafkaBroker(workdir / f"node-{i + 1}", lib_dir, i + 1, cports[i], voters)
                          for i in range(n)])

    def start(self) -> None:
        cluster_id = self.nodes[0].random_uuid()
        for b in self.nodes:  # all at once: no node is ready before a quorum is up
            b.cluster_id = cluster_id
            b.launch(fresh=True)
        for b in self.nodes:
            b.wait_ready(KafkaBroker.start_timeout, brokers=len(self.nodes))

    def controller(self) -> int:
        return kadmin.describe_quorum_leader(self.live_bootstrap())


class StrataCluster(Cluster):
    """One etcd and n Strata brokers on it (strata.metadata.backend=etcd), started one at a
    time as scripts/cluster.sh does (the first creates the cluster id); defaults otherwise."""

    name = "strata"

    def __init__(self, workdir: Path, binary: Path, n: int = 3):
        self.etcd = Etcd(workdir / "etcd")
        extra = {"strata.metadata.backend": "etcd", "strata.etcd.endpoints": self.etcd.endpoint}
        super().__init__([StrataBroker(workdir / f"broker-{i + 1}", binary, i + 1, extra)
                          for i in range(n)])

    def start(self) -> None:
        self.etcd.start()
        for b in self.nodes:
            b.start()
        self.nodes[0].wait_ready(30, brokers=len(self.nodes))

    def processes(self) -> dict[str, int]:
        out = super().processes()
        if self.etcd.proc is not None:
            out["etcd"] = self.etcd.pid
        return out

    def controller(self) -> int:
        return kadmin.metadata(self.live_bootstrap(), [])["controller"]

    def stop(self) -> None:
        super().stop()
        self.etcd.stop()

    def wipe(self) -> None:
        super().wipe()
        self.etcd.wipe()

    @property
    def config(self) -> dict:
        return {**super().config, "etcd": " ".join(self.etcd.command)}
