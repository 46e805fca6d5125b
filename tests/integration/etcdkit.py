"""A real etcd (Debian's etcd-server) for black-box tests: one or more members on free
ports of one address (loopback unless `host` is given) with data in a temporary directory;
members can be stopped, killed and started again. `etcdctl()` runs Debian's etcdctl against
the cluster."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path


from ports import free_port as _free_port  # noqa: E402


class Etcd:
    """`tls`: {"cert", "key", "ca"} PEM paths: clients must come over TLS with a certificate
    of that CA (--client-cert-auth); etcdctl here uses the same certificate."""

    def __init__(self, workdir: Path, members: int = 1, host: str = "127.0.0.1",
                 tls: dict | None = None):
        self.workdir = workdir
        self.host = host
        self.tls = tls
        self.client_args = ([] if tls is None else
                            ["--cacert", str(tls["ca"]), "--cert", str(tls["cert"]),
                             "--key", str(tls["key"])])
        self.user_args: list[str] = []
        workdir.mkdir(parents=True, exist_ok=True)
        self.members = [{"name": f"m{i}", "client": _free_port(), "peer": _free_port(), "proc": None}
                        for i in range(members)]
        self.initial = ",".join(f"{m['name']}=http://{host}:{m['peer']}" for m in self.members)
        for i in range(members):
            self.start(i)
        self.wait_healthy()

    @property
    def endpoints(self) -> str:
        return ",".join(f"{self.host}:{m['client']}" for m in self.members)

    def start(self, i: int) -> None:
        m = self.members[i]
        scheme = "https" if self.tls else "http"
        client, peer = f"{scheme}://{self.host}:{m['client']}", f"http://{self.host}:{m['peer']}"
        tls = [] if self.tls is None else [
            "--cert-file", str(self.tls["cert"]), "--key-file", str(self.tls["key"]),
            "--trusted-ca-file", str(self.tls["ca"]), "--client-cert-auth"]
        log = open(self.workdir / f"{m['name']}.log", "ab")
        m["proc"] = subprocess.Popen(
            ["etcd", "--name", m["name"], "--data-dir", str(self.workdir / m["name"]),
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", self.initial, "--initial-cluster-state", "new",
             "--initial-cluster-token", self.workdir.name,
             "--heartbeat-interval", "50", "--election-timeout", "500",
             # As scripts/cluster.sh runs it: history compacted, so the 2 GB quota never fills.
             "--auto-compaction-mode", "revision", "--auto-compaction-retention", "10000",
             "--log-level", "warn", *tls],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL)

    def enable_auth(self, password: str) -> None:
        """etcd's authentication on, with a root user of `password` (etcdctl uses it)."""
        self.etcdctl("user", "add", f"root:{password}")
        self.etcdctl("auth", "enable")
        self.user_args = ["--user", f"root:{password}"]

    def stop(self, i: int, kill: bool = False) -> None:
        p = self.members[i]["proc"]
        if p is None:
            return
        p.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        self.members[i]["proc"] = None

    def stop_all(self) -> None:
        for i in range(len(self.members)):
            self.stop(i)

    def etcdctl(self, *args: str, check: bool = True) -> str:
        env = dict(os.environ, ETCDCTL_API="3")
        r = subprocess.run(["etcdctl", "--endpoints", self.endpoints, "--dial-timeout", "2s",
                            "--command-timeout", "5s", *self.client_args, *self.user_args,
                            *args],
                           capture_output=True, text=True, env=env)
        if check and r.returncode != 0:
            raise AssertionError(f"etcdctl {' '.join(args)} failed: {r.stderr}")
        return r.stdout

    def get_prefix(self, prefix: str) -> dict[str, dict]:
        """Every key under `prefix` with value and revisions (etcdctl get -w json)."""
        out = json.loads(self.etcdctl("get", prefix, "--prefix", "-w", "json"))
        import base64
        kvs = {}
        for kv in out.get("kvs", []):
            key = base64.b64decode(kv["key"]).decode()
            kvs[key] = {"value": base64.b64decode(kv.get("value", "")).decode(),
                        "create_revision": int(kv.get("create_revision", 0)),
                        "mod_revision": int(kv.get("mod_revision", 0)),
                        "lease": int(kv.get("lease", 0))}
        return kvs

    def wait_healthy(self, timeout: float = 30) -> None:
        deadline = time.time() + timeout
        last = ""
        while time.time() < deadline:
            r = subprocess.run(["etcdctl", "--endpoints", self.endpoints, *self.client_args,
                                *self.user_args, "endpoint", "health"],
                               capture_output=True, text=True, env=dict(os.environ, ETCDCTL_API="3"))
            live = [m for m in self.members if m["proc"] is not None]
            if (r.stdout + r.stderr).count("is healthy") >= len(live):
                return
            last = r.stdout + r.stderr
            time.sleep(0.1)
        raise AssertionError(f"etcd not healthy after {timeout}s: {last}\n" + self.logs())

    def logs(self) -> str:
        return "\n".join((self.workdir / f"{m['name']}.log").read_text(errors="replace")[-4000:]
                         for m in self.members if (self.workdir / f"{m['name']}.log").exists())
