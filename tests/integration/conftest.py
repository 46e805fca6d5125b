"""pytest fixtures that run a broker process for black-box tests.

`broker` (one per test module) and `broker_factory(**config)` (per test, with extra config)
start the Strata binary ($STRATA_BIN, default build/strata) as
    strata serve --config FILE [--set key=value ...]
on a free loopback port with a fresh data dir, stderr captured to a file, and stop it at
teardown (SIGTERM, then SIGKILL). With STRATA_TEST_AGAINST_KAFKA=1 the same fixtures start a
real single-node KRaft Apache Kafka from tests/integration/kafka-tools/target/lib instead,
so the suite itself can be checked against the reference implementation.

When a test fails, the broker's stderr written during that test is attached to the report.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kit  # noqa: E402

STRATA_BIN = os.environ.get("STRATA_BIN", str(kit.REPO_ROOT / "build" / "strata"))
START_TIMEOUT = 20.0
KAFKA_START_TIMEOUT = 90.0
STOP_TIMEOUT = 20.0

_live_brokers: list["Broker"] = []


from ports import free_port  # noqa: E402,F401 (below the ephemeral range)


KAFKA_LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = STDERR
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = STDERR
logger.kafka.name = org.apache.kafka
logger.kafka.level = warn
logger.state.name = state.change.logger
logger.state.level = warn
"""


class Broker:
    """One broker process under test: Strata, or Apache Kafka in self-check mode.

    Attributes: port, host, bootstrap ("HOST:PORT"), data_dir (its log.dirs), config (dict),
    log_path (captured stdout+stderr of every start, appended). Not thread-safe.

    `host` is the address it listens on and advertises (127.0.0.1 unless given); with
    `netns` the process runs in that network namespace (`ip netns exec NETNS ...`, which
    execs the broker in place: signals and the exit code are the broker's own).
    """

    def __init__(self, workdir: Path, config: dict | None = None, set_args: dict | None = None,
                 host: str = "127.0.0.1", netns: str | None = None):
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.kafka = kit.against_kafka()
        self.unclean_stops: list[str] = []
        self.host = host
        self.netns = netns
        self.port = free_port()
        self.bootstrap = f"{host}:{self.port}"
        self.data_dir = workdir / "data"
        self.data_dir.mkdir(exist_ok=True)
        self.log_path = workdir / "broker.stderr.log"
        self.config_path = workdir / ("server.properties" if self.kafka else "strata.properties")
        self.config = {
            "node.id": "1",
            "listeners": f"PLAINTEXT://{host}:{self.port}",
            "advertised.listeners": f"PLAINTEXT://{host}:{self.port}",
            "log.dirs": str(self.data_dir),
            "num.partitions": "1",
            "auto.create.topics.enable": "false",
        }
        if self.kafka:
            self._add_kafka_config()
        # "{port}" in a value stands for this broker's port (named listeners of a test).
        self.config.update({k: str(v).replace("{port}", str(self.port))
                            for k, v in (config or {}).items()})
        self.set_args = {k: str(v) for k, v in (set_args or {}).items()}
        self.proc: subprocess.Popen | None = None
        self._log_file = None
        self.start_log_offset = 0  # size of log_path when the current process started
        self._formatted = False

    def _add_kafka_config(self) -> None:
        cport = free_port()
        self.config.update({
            "process.roles": "broker,controller",
            "listeners": f"PLAINTEXT://{self.host}:{self.port},CONTROLLER://127.0.0.1:{cport}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{cport}",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # A restarted (kill -9) node waits out its old registration's session: keep it short.
            "broker.heartbeat.interval.ms": "500",
            "broker.session.timeout.ms": "2000",
        })

    # ---- lifecycle -------------------------------------------------------------------

    def _write_config(self) -> None:
        lines = ["# written by tests/integration/conftest.py"]
        lines += [f"{k}={v}" for k, v in self.config.items()]
        self.config_path.write_text("\n".join(lines) + "\n")

    def _command(self) -> list[str]:
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        if not self.kafka:
            cmd = [STRATA_BIN, "serve", "--config", str(self.config_path)]
            for k, v in self.set_args.items():
                cmd += ["--set", f"{k}={v}"]
            return prefix + cmd
        log4j = self.workdir / "log4j2.properties"
        log4j.write_text(KAFKA_LOG4J2)
        return prefix + ["java", "-Xmx1g", "-XX:+UseG1GC", f"-Dlog4j2.configurationFile={log4j}",
                         "-cp", f"{kit.KAFKA_LIB}/*", "kafka.Kafka", str(self.config_path)]

    def _format_kafka_storage(self) -> None:
        cluster_id = subprocess.run(
            ["java", "-cp", f"{kit.KAFKA_LIB}/*", "kafka.tools.StorageTool", "random-uuid"],
            check=True, capture_output=True, text=True).stdout.strip()
        r = subprocess.run(
            ["java", "-cp", f"{kit.KAFKA_LIB}/*", "kafka.tools.StorageTool", "format",
             "-t", cluster_id, "-c", str(self.config_path), "--standalone"],
            capture_output=True, text=True)
        assert r.returncode == 0, f"kafka storage format failed:\n{r.stdout}\n{r.stderr}"
        self._formatted = True

    def start(self) -> None:
        assert self.proc is None, "broker already running"
        if self.set_args and self.kafka:
            self.config.update(self.set_args)  # Kafka has no --set; fold into the file
        self._write_config()
        if self.kafka and not self._formatted:
            self._format_kafka_storage()
        if not self.kafka and not os.access(STRATA_BIN, os.X_OK):
            pytest.fail(f"broker binary {STRATA_BIN} not found (set STRATA_BIN)")
        self.start_log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self._log_file = open(self.log_path, "ab")
        self._log_file.write(f"==== start {time.strftime('%H:%M:%S')}: {' '.join(self._command())}\n"
                             .encode())
        self._log_file.flush()
        self.proc = subprocess.Popen(self._command(), stdout=self._log_file, stderr=self._log_file,
                                     stdin=subprocess.DEVNULL, cwd=self.workdir)
        _live_brokers.append(self)
        self._wait_ready()

    def listener_addresses(self) -> list[tuple[str, int]]:
        """(host, port) of every configured listener with a fixed port, the first listener first."""
        addresses = []
        for listener in self.config["listeners"].split(","):
            host, _, port = listener.split("://", 1)[1].rpartition(":")
            if port.isdigit() and int(port) != 0:
                addresses.append((host.strip("[]") or "127.0.0.1", int(port)))
        return addresses

    def _wait_ready(self) -> None:
        # Every listener, not only the first: a broker binds its listeners one after another
        # (an SSL listener's keystore loads in between), and a test may go straight to any.
        deadline = time.time() + (KAFKA_START_TIMEOUT if self.kafka else START_TIMEOUT)
        waiting = self.listener_addresses()
        while waiting:
            if self.proc.poll() is not None:
                raise AssertionError(f"broker exited with {self.proc.returncode} during start-up:\n"
                                     f"{self.log_tail()}")
            try:
                with socket.create_connection(waiting[0], timeout=1):
                    waiting.pop(0)
                    continue
            except OSError:
                pass
            if time.time() > deadline:
                raise AssertionError(f"broker did not accept connections on {waiting}:\n"
                                     f"{self.log_tail()}")
            time.sleep(0.05)
        if self.kafka:  # Kafka accepts before it can serve metadata; wait until it can
            a = kit.admin(self.bootstrap)
            while not a.list_topics(timeout=10).brokers:
                assert time.time() < deadline, "kafka never listed a broker"
                time.sleep(0.2)

    def _reap(self) -> None:
        if self in _live_brokers:
            _live_brokers.remove(self)
        self.proc = None
        if self._log_file:
            self._log_file.close()
            self._log_file = None

    def stop(self) -> int | None:
        """SIGTERM, wait, then SIGKILL. Returns the exit code (None if it had to be killed).
        A Strata broker that needs the SIGKILL, or exits non-zero, is recorded in
        `unclean_stops`, and the fixture that made it fails the test."""
        if self.proc is None:
            return None
        rc = None
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if not self.kafka and rc != 0:
            self.unclean_stops.append(
                f"{self.workdir.name}: " + (f"exited with {rc} after SIGTERM" if rc is not None
                                            else f"still running {STOP_TIMEOUT:.0f}s after SIGTERM"))
        self._reap()
        return rc

    def kill9(self) -> None:
        """SIGKILL a running broker. One that had already exited (a crash, a sanitizer
        report) fails the test here: the kill would otherwise hide that it died by itself."""
        assert self.proc is not None, f"{self.workdir.name}: kill9 of a broker that is not started"
        rc = self.proc.poll()
        if rc is None:
            self.proc.kill()
            self.proc.wait()
        self._reap()
        assert rc is None, (f"{self.workdir.name}: had already exited with {rc} before kill9:\n"
                            f"{self.log_tail()}")

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # ---- inspection ------------------------------------------------------------------

    def log_text(self, since_start: bool = False) -> str:
        if not self.log_path.exists():
            return ""
        with open(self.log_path, "rb") as f:
            if since_start:
                f.seek(self.start_log_offset)
            return f.read().decode(errors="replace")

    def log_tail(self, max_bytes: int = 20000) -> str:
        text = self.log_text()
        return text[-max_bytes:]

    def partition_dir(self, topic: str, partition: int) -> Path:
        return self.data_dir / f"{topic}-{partition}"


def _make_broker(tmp_root: Path, config=None, set_args=None, **where) -> Broker:
    b = Broker(tmp_root / f"broker-{uuid.uuid4().hex[:8]}", config, set_args, **where)
    b.start()
    return b


HDFS_DIR = Path(__file__).resolve().parents[1] / "hdfs"


@pytest.fixture(scope="module")
def hdfs(tmp_path_factory):
    """One MiniDFSCluster (tests/hdfs) shared by the tests of a module; required: the test
    command builds its jar."""
    if not (HDFS_DIR / "target" / "strata-minihdfs.jar").exists():
        pytest.fail("tests/hdfs/target/strata-minihdfs.jar is missing: run "
                    "scripts/install-test-deps.sh (these tests run against real HDFS)")
    sys.path.insert(0, str(HDFS_DIR))
    from hdfs_fixture import MiniHdfs
    cluster = MiniHdfs(tmp_path_factory.mktemp("hdfs"))
    cluster.start(format=True)
    yield cluster
    cluster.stop()


S3_DIR = Path(__file__).resolve().parents[1] / "s3"


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    """One S3Proxy (tests/s3, a real S3-compatible server on its filesystem backend) shared by
    the tests of a module; required: the test command installs its jar."""
    import s3kit
    if not s3kit.S3PROXY_JAR.is_file():
        pytest.fail(f"{s3kit.S3PROXY_JAR} is missing: run scripts/install-test-deps.sh "
                    "(these tests run against a real S3 server)")
    server = s3kit.S3Server(tmp_path_factory.mktemp("s3")).start()
    yield server
    server.stop()


@pytest.fixture
def remote_store(request):
    """The remote store of a test (remote_stores.py): the module's MiniDFSCluster, or with
    @pytest.mark.parametrize("remote_store", ["hdfs", "s3"], indirect=True) each in turn."""
    import remote_stores
    kind = getattr(request, "param", "hdfs")
    if kind == "s3":
        return remote_stores.S3Store(request.getfixturevalue("s3_server"))
    return remote_stores.HdfsStore(request.getfixturevalue("hdfs"))


@pytest.fixture
def remote_config(remote_store, request):
    """Broker settings for a tier of the test's own (/strata/<test name>) in `remote_store`."""
    import re
    return remote_store.config("/strata/" + re.sub(r"[^A-Za-z0-9_.-]", "-", request.node.name))


@pytest.fixture
def remote_uri(hdfs, request):
    """A WebHDFS root of the test's own (/strata/<test name>) in the module's MiniDFSCluster."""
    return hdfs.webhdfs_uri(f"/strata/{request.node.name}")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """A broker with default config shared by the tests of one module (use fresh topics)."""
    b = _make_broker(tmp_path_factory.mktemp("broker"))
    yield b
    b.stop()
    _fail_on_sanitizer_reports([b])
    _fail_on_unclean_stops([b])


@pytest.fixture
def broker_factory(tmp_path):
    """broker_factory(config=None, set_args=None, host=, netns=, **config) -> a started
    Broker of this test.

    Keys may be given as a dict (`config={"log.segment.bytes": 1048576}`) or keywords with
    underscores for dots (`log_segment_bytes=1048576`). `host` and `netns` are the
    Broker's (listen address, network namespace). All are stopped at teardown.
    """
    made: list[Broker] = []

    def make(config: dict | None = None, set_args: dict | None = None,
             host: str = "127.0.0.1", netns: str | None = None, **kw) -> Broker:
        cfg = dict(config or {})
        cfg.update({k.replace("_", "."): v for k, v in kw.items()})
        b = _make_broker(tmp_path, cfg, set_args, host=host, netns=netns)
        made.append(b)
        return b

    yield make
    for b in made:
        b.stop()
    _fail_on_sanitizer_reports(made)
    _fail_on_unclean_stops(made)


def _fail_on_unclean_stops(brokers: list) -> None:
    stops = [s for b in brokers for s in b.unclean_stops]
    if stops:
        pytest.fail("broker did not shut down cleanly:\n" + "\n".join(stops))


def _fail_on_sanitizer_reports(brokers: list) -> None:
    reports = [f"{b.log_path}: {line.strip()}" for b in brokers for line in _sanitizer_lines(b)]
    if reports:
        pytest.fail("sanitizer report in broker output:\n" + "\n".join(reports[:20]))


# Lines ASan, LSan and UBSan start their reports with (a broker built with scripts/build.sh asan).
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def _sanitizer_lines(b) -> list[str]:
    try:
        text = Path(b.log_path).read_text(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if any(m in line for m in SANITIZER_MARKERS)]


@pytest.fixture
def kafka_mode() -> bool:
    return kit.against_kafka()


# ---- attach broker stderr to failing tests --------------------------------------------

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_log_marks] = {id(b): (b, b.log_path.stat().st_size if b.log_path.exists() else 0)
                              for b in _live_brokers}


_log_marks = pytest.StashKey[dict]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    marks = item.stash.get(_log_marks, {})
    seen = set()
    for b in list(_live_brokers) + [m[0] for m in marks.values()]:
        if id(b) in seen or not b.log_path.exists():
            continue
        seen.add(id(b))
        start = marks.get(id(b), (b, 0))[1]
        with open(b.log_path, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
        if len(text) > 30000:
            text = "...\n" + text[-30000:]
        report.sections.append((f"broker stderr ({b.bootstrap}, {b.log_path})", text))


def pytest_report_header(config):
    if kit.against_kafka():
        return f"brokers: real Apache Kafka from {kit.KAFKA_LIB} (STRATA_TEST_AGAINST_KAFKA=1)"
    return f"brokers: Strata {STRATA_BIN}"
