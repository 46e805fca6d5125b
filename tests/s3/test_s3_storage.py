"""S3Storage against a real S3-compatible server: starts S3Proxy (tests/integration/s3kit.py),
then runs the S3 gtests of strata_tiered_tests with STRATA_TEST_S3_* pointing at it.

    tests/s3/install.sh                                  # once (also done on demand)
    ninja -C build strata_tiered_tests
    python3 -m pytest -q tests/s3                        # uses build/strata_tiered_tests
    STRATA_TIERED_TESTS_BIN=build-x/strata_tiered_tests python3 -m pytest -q -s tests/s3
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import s3kit  # noqa: E402

BUCKET = "strata-gtest"


def _tests_binary() -> Path:
    p = Path(os.environ.get("STRATA_TIERED_TESTS_BIN", ROOT / "build" / "strata_tiered_tests"))
    if not p.exists():
        pytest.fail(f"{p} not found: build it (ninja -C build strata_tiered_tests) "
                    "or set STRATA_TIERED_TESTS_BIN")
    return p


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    if not s3kit.S3PROXY_JAR.is_file():
        subprocess.run([str(HERE / "install.sh")], check=True)
    server = s3kit.S3Server(tmp_path_factory.mktemp("s3")).start()
    server.create_bucket(BUCKET)
    yield server
    server.stop()


def run_gtests(s3, gtest_filter: str, env_extra: dict, expect: int) -> str:
    env = dict(os.environ, STRATA_TEST_S3_ENDPOINT=env_extra.pop("endpoint", s3.endpoint), STRATA_TEST_S3_BUCKET=BUCKET,
               STRATA_TEST_S3_ACCESS_KEY=s3.access_key, STRATA_TEST_S3_SECRET_KEY=s3.secret_key,
               **env_extra)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        env.pop(name, None)
    proc = subprocess.run([str(_tests_binary()), f"--gtest_filter={gtest_filter}"], env=env,
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    print(out)
    assert proc.returncode == 0, out[-6000:]
    assert "SKIPPED" not in out, "an S3 test skipped itself"
    m = re.search(r"\[  PASSED  \] (\d+) tests?", out)
    assert m and int(m.group(1)) == expect, out[-3000:]
    return out


def test_s3_operations(s3):
    """put/get/stat/list/delete/rename, batched deletes, multipart uploads from a file and from
    memory with ranged reads across parts, cancelled and orphaned uploads aborted, error
    mapping, credentials from the shared file by profile."""
    out = run_gtests(s3, "S3Test.*-S3Test.OutageFailsFastAndRestartRecovers", {}, expect=6)
    assert "[s3] 40 MiB multipart put" in out


def test_s3_kill_and_restart(s3):
    """kill -9 the server: a fast kUnavailable; restarted on the same port and data: the
    object written before is read back and new ones written."""
    kit = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'tests/integration/s3kit.py'))}"
    workdir = shlex.quote(str(s3.workdir))
    env = {"STRATA_TEST_S3_KILL_CMD": f"{kit} kill --workdir {workdir}",
           "STRATA_TEST_S3_RESTART_CMD": f"{kit} start --workdir {workdir} --port {s3.port}"}
    run_gtests(s3, "S3Test.OutageFailsFastAndRestartRecovers", env, expect=1)


def test_s3_virtual_hosted_style(tmp_path):
    """The same operations addressed virtual-hosted style (http://BUCKET.localhost:PORT/key, as
    AWS and most stores expect), not path-style: signed with the bucket in the Host header.
    libcurl resolves every *.localhost name to the loopback address itself."""
    server = s3kit.S3Server(tmp_path / "s3", virtual_host="localhost").start()
    try:
        server.create_bucket(BUCKET)
        out = run_gtests(server, "S3Test.PutGetStatListDelete:S3Test.MultipartUploadsFromFileAndMemory"
                         ":S3Test.RecursiveDeleteGoesInBatches",
                         {"endpoint": f"http://localhost:{server.port}",
                          "STRATA_TEST_S3_VIRTUAL_HOSTED": "1"}, expect=3)
    finally:
        server.stop()
