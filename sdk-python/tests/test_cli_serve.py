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
    # What to install, and which Pythons and platforms the harness wheel covers.
    assert 'pip install "wasmkeep-actor[testing]"' in r.stderr
    assert "CPython 3.11 or newer on Linux x86_64 with glibc 2.28 or newer" in r.stderr, r.stderr


def test_the_missing_harness_message_says_when_this_python_is_not_covered(monkeypatch):
    from wasmkeep_actor import _harness_wheel as h

    monkeypatch.setattr(h.platform, "machine", lambda: "aarch64")
    assert not h.covered()
    msg = h.missing("no wasmkeep-shim")
    assert "not made for this Python" in msg
    assert "it is for CPython 3.11 or newer on Linux x86_64 with glibc 2.28 or newer" in msg
    assert "on Linux aarch64" in msg and "from versions: none" in msg

    monkeypatch.setattr(h.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(h.platform, "libc_ver", lambda: ("glibc", "2.27"))
    assert not h.covered()
    assert "with glibc 2.27" in h.missing("x")

    monkeypatch.setattr(h.platform, "libc_ver", lambda: ("glibc", "2.28"))
    monkeypatch.setattr(h.platform, "system", lambda: "Linux")
    monkeypatch.setattr(h.platform, "python_implementation", lambda: "CPython")
    assert h.covered() == (sys.version_info[:2] >= (3, 11))
