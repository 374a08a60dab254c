"""`python -m wasmkeep_actor serve`: runs the wasmkeep-shim the harness wheel
installs (or one on PATH) with `serve` and the arguments given."""

import os
import stat
import subprocess
import sys
import sysconfig

import pytest


def run_serve(tmp_path, path, *args):
    env = dict(os.environ, PATH=path)
    return subprocess.run(
        [sys.executable, "-m", "wasmkeep_actor", "serve", *args], env=env, capture_output=True, text=True, cwd=tmp_path
    )


@pytest.mark.skipif(
    os.path.exists(os.path.join(sysconfig.get_path("scripts"), "wasmkeep-shim")),
    reason="this environment has the harness wheel's wasmkeep-shim, which serve prefers",
)
def test_serve_runs_the_host_binary_with_its_arguments(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "wasmkeep-shim"
    fake.write_text('#!/bin/sh\necho "$@"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    r = run_serve(tmp_path, f"{bin_dir}:/usr/bin:/bin", "--manifest", "w.toml", "--listen", "127.0.0.1:0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["serve", "--manifest", "w.toml", "--listen", "127.0.0.1:0"]


@pytest.mark.skipif(
    os.path.exists(os.path.join(sysconfig.get_path("scripts"), "wasmkeep-shim")),
    reason="this environment has the harness wheel's wasmkeep-shim",
)
def test_serve_without_a_host_binary_exits_2(tmp_path):
    r = run_serve(tmp_path, str(tmp_path))
    assert r.returncode == 2
