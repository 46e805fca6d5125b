"""The remote stores tiered storage runs against in tests, behind one small interface, so a test
written once runs on HDFS (MiniDFSCluster, tests/hdfs) and on S3 (S3Proxy, tests/s3) alike.

    store.config("/strata/t1")   # broker settings for a tier rooted there
    store.kill9(); store.restart()
    store.digest("/strata/t1")   # {path: (length, sha256)} of every object, read independently
    store.read(path); store.list_files("/strata/t1")

Paths are the store's own (store.path("/strata/t1")): absolute HDFS paths, or S3 keys
("strata/t1/..."); digest, list_files, children and read agree on them. Reading back goes around Strata: Hadoop's Java client over RPC for HDFS,
a plain signed HTTP client (s3kit) for S3.
"""
from __future__ import annotations

import hashlib
import time
import urllib.request

BUCKET = "strata-tier"


class Store:
    """What both stores share."""

    def path(self, root: str) -> str:
        return root

    def children(self, directory: str) -> list[str]:
        """Names directly under `directory` (files and subdirectories), sorted."""
        prefix = directory.rstrip("/") + "/"
        return sorted({f[len(prefix):].split("/", 1)[0] for f in self.list_files(directory)
                       if f.startswith(prefix)})


class HdfsStore(Store):
    name = "hdfs"

    def __init__(self, hdfs):
        self.hdfs = hdfs

    def config(self, root: str) -> dict:
        return {"strata.remote.storage.uri": self.hdfs.webhdfs_uri(root)}

    def kill9(self) -> None:
        self.hdfs.kill9()

    def restart(self) -> None:
        self.hdfs.restart()

    def digest(self, root: str) -> tuple[dict[str, tuple[int, str]], float]:
        return self.hdfs.digest(root)

    def list_files(self, root: str) -> list[str]:
        return self.hdfs.list_files(root)

    def read(self, path: str) -> bytes:
        url = (f"http://127.0.0.1:{self.hdfs.http_port}/webhdfs/v1{path}"
               "?op=OPEN&user.name=strata-test")
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.read()


class S3Store(Store):
    name = "s3"

    def __init__(self, server):
        self.server = server
        server.create_bucket(BUCKET)

    def config(self, root: str) -> dict:
        return {"strata.remote.storage.uri": f"s3://{BUCKET}{root}",
                "strata.remote.s3.endpoint": self.server.endpoint,
                "strata.remote.s3.region": self.server.region,
                "strata.remote.s3.path.style.access": "true",
                "strata.remote.s3.access.key.id": self.server.access_key,
                "strata.remote.s3.secret.access.key": self.server.secret_key}

    def kill9(self) -> None:
        self.server.kill9()

    def restart(self) -> None:
        self.server.restart()

    def path(self, root: str) -> str:
        return root.strip("/")

    def digest(self, root: str) -> tuple[dict[str, tuple[int, str]], float]:
        files: dict[str, tuple[int, str]] = {}
        secs = 0.0
        for key in self.list_files(root):
            t0 = time.monotonic()
            data = self.server.get(BUCKET, key)
            secs += time.monotonic() - t0
            files[key] = (len(data), hashlib.sha256(data).hexdigest())
        return files, secs

    def list_files(self, root: str) -> list[str]:
        return sorted(self.server.list_keys(BUCKET, self.path(root) + "/"))

    def read(self, path: str) -> bytes:
        return self.server.get(BUCKET, path)
