"""Starting and stopping the two systems under test, each on a fresh data dir:
Strata (`strata serve --set ...`) and Apache Kafka 4.x as one KRaft combined node
(broker+controller, node.id=1, its own controller port, storage formatted --standalone).

Both get the same segment size (1 GiB, the default of both), PLAINTEXT on 127.0.0.1 and no
per-message fsync (the defaults); everything else is each system's own default.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
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

    def check_alive(self, during: str) -> None:
        """Raises if the broker process has exited (e.g. crashed during a workload)."""
        if self.proc is not None and self.proc.poll() is not None:
            self.exit_code = self.proc.returncode
            raise RuntimeError(f"{self.name} exited with code {self.exit_code} during {during}; "
                               f"see {self.log_path}")

    def wipe(self) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def _wait(self, timeout: float) -> None:
        try:
            kadmin.wait_ready(self.bootstrap, timeout)
        except kadmin.KafkaError:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode} at start-up; "
                                   f"see {self.log_path}") from None
            raise


class StrataBroker(Broker):
    name = "strata"

    def __init__(self, workdir: Path, binary: Path):
        super().__init__(workdir)
        self.binary = binary
        self.config = {
            "node.id": "1",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.data_dir),
            "log.segment.bytes": str(SEGMENT_BYTES),
        }

    def start(self) -> None:
        self.fresh_data_dir()
        cmd = [str(self.binary), "serve"]
        for k, v in self.config.items():
            cmd += ["--set", f"{k}={v}"]
        self.command = cmd
        self.proc = procs.spawn(cmd, self.log_path, cwd=self.workdir)
        self._wait(30)


class KafkaBroker(Broker):
    name = "kafka"

    def __init__(self, workdir: Path, lib_dir: Path):
        super().__init__(workdir)
        self.lib_dir = lib_dir
        cport = free_port()
        self.config = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{cport}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{cport}",
            "log.dirs": str(self.data_dir),
            "log.segment.bytes": str(SEGMENT_BYTES),
            # A single node cannot hold 3 replicas of the internal topics.
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
        }

    def _java(self, main: str, *args: str, jvm: list[str] | None = None) -> list[str]:
        log4j = self.workdir / "log4j2.properties"
        log4j.write_text(LOG4J2)
        return ["java", *(jvm or []), f"-Dlog4j2.configurationFile={log4j}",
                "-cp", f"{self.lib_dir}/*", main, *args]

    def start(self) -> None:
        self.fresh_data_dir()
        props = self.workdir / "server.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in self.config.items()))
        fmt_log = self.workdir / "format.log"
        rc, out = procs.run_logged(self._java("kafka.tools.StorageTool", "random-uuid"), fmt_log, 120)
        cluster_id = out.strip().splitlines()[-1].strip()
        if rc != 0 or len(cluster_id) != 22:
            raise RuntimeError(f"kafka-storage random-uuid failed: {out[-2000:]}")
        rc, out = procs.run_logged(self._java("kafka.tools.StorageTool", "format", "-t", cluster_id,
                                              "-c", str(props), "--standalone"), fmt_log, 120)
        if rc != 0:
            raise RuntimeError(f"kafka-storage format failed: {out[-2000:]}")
        cmd = self._java("kafka.Kafka", str(props), jvm=KAFKA_JVM)
        self.command = cmd
        self.proc = procs.spawn(cmd, self.log_path, cwd=self.workdir)
        self._wait(180)
