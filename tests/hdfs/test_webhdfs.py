"""WebHdfsStorage against a real HDFS: starts MiniHdfs, then runs the WebHDFS gtests of
strata_tiered_tests with STRATA_TEST_WEBHDFS_URI pointing at it.

    tests/hdfs/build.sh                                  # once (also done on demand)
    ninja -C build strata_tiered_tests
    python3 -m pytest -q tests/hdfs                      # uses build/strata_tiered_tests
    STRATA_TIERED_TESTS_BIN=build-x/strata_tiered_tests python3 -m pytest -q -s tests/hdfs
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
sys.path.insert(0, str(HERE))
from hdfs_fixture import MiniHdfs, build  # noqa: E402

ROOT = HERE.parent.parent


def _tests_binary() -> Path:
    p = Path(os.environ.get("STRATA_TIERED_TESTS_BIN", ROOT / "build" / "strata_tiered_tests"))
    if not p.exists():
        pytest.fail(f"{p} not found: build it (ninja -C build strata_tiered_tests) "
                    "or set STRATA_TIERED_TESTS_BIN")
    return p


@pytest.fixture(scope="module")
def hdfs(tmp_path_factory):
    build()
    h = MiniHdfs(tmp_path_factory.mktemp("hdfs"))
    h.start(format=True)
    yield h
    h.stop()


def run_gtests(gtest_filter: str, env_extra: dict, expect: int) -> str:
    env = dict(os.environ, **env_extra)
    proc = subprocess.run([str(_tests_binary()), f"--gtest_filter={gtest_filter}"], env=env,
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    print(out)
    assert proc.returncode == 0, out[-6000:]
    assert "SKIPPED" not in out, "a WebHDFS test skipped itself"
    m = re.search(r"\[  PASSED  \] (\d+) tests?", out)
    assert m and int(m.group(1)) == expect, out[-3000:]
    return out


def test_webhdfs_operations(hdfs):
    """put/get/stat/list/delete/rename, 64 MiB upload + ranged reads, error mapping, hedging,
    reads of a file reusing its DataNode redirect."""
    out = run_gtests("WebHdfsTest.*-WebHdfsTest.OutageOpensBreakerAndRestartClosesIt",
                     {"STRATA_TEST_WEBHDFS_URI": hdfs.webhdfs_uri("/strata-test")}, expect=6)
    assert "[webhdfs] 64 MiB put" in out


def test_webhdfs_kill_and_restart(hdfs):
    """kill -9 the HDFS JVM: fast kUnavailable, breaker opens; restart: breaker closes."""
    fixture = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'hdfs_fixture.py'))}"
    base = shlex.quote(str(hdfs.base_dir))
    env = {
        "STRATA_TEST_WEBHDFS_URI": hdfs.webhdfs_uri("/strata-test"),
        "STRATA_TEST_WEBHDFS_KILL_CMD": f"{fixture} kill --base-dir {base} >/dev/null",
        "STRATA_TEST_WEBHDFS_RESTART_CMD": f"{fixture} restart --base-dir {base} >/dev/null",
    }
    try:
        run_gtests("WebHdfsTest.OutageOpensBreakerAndRestartClosesIt", env, expect=1)
    finally:
        if not hdfs.running:  # leave a live cluster for later tests in this module
            hdfs.start(format=False)
    assert hdfs.running
