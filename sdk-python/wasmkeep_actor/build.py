"""The build command: an app module → a WebAssembly component, by componentize-py.

    python -m wasmkeep_actor build app.py -o app.wasm

What goes into the component: the app module and the Python modules and
packages beside it (files ending in `.py` and folders with an `__init__.py`),
the SDK, anything under the `-p` paths, and componentize-py's own Python
standard library. They are staged in a temporary folder first, so that a
virtualenv or `.git` beside the app never ends up inside.

A build whose inputs (every staged file, the WIT, the componentize-py
version) are unchanged since the last one into the same output is skipped:
the output keeps its bytes, so the host's compiled-component cache stays warm.

componentize-py's output is not byte-for-byte reproducible, so two builds of
the same inputs would be two components, each compiled by the host on its
first load (seconds). The last few builds are therefore kept by the digest of
their inputs (`$WASMKEEP_PY_BUILD_CACHE`, default the user's cache directory,
`~/.cache/wasmkeep/python-builds`; `off` turns it off): the same inputs built
into another output, or again after an edit was undone, reuse those bytes
instead of running componentize-py, and the host's compiled copy with them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ._spinner import spinner

#: The componentize-py release the SDK's bindings are generated with.
COMPONENTIZE_PY_VERSION = "0.25.1"
ENTRY = "wasmkeep_entry__"
_SDK = Path(__file__).resolve().parent
#: SDK files that only make sense on the host, never inside a component.
_HOST_ONLY = {"testing.py", "chaos.py", "_native_harness.py", "pytest_plugin.py", "build.py", "_spinner.py", "__main__.py", "cli.py", "_bindings", "wit", "__pycache__"}
_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "target"}


class BuildError(Exception):
    """The build failed; the message says why and what to do."""


@dataclass
class BuildResult:
    output: Path
    skipped: bool
    seconds: float
    size: int
    #: Copied from an earlier build of the same inputs (no componentize-py run).
    reused: bool = False


#: How many builds the build cache keeps (each ~18.5 MB), the newest used first.
KEEP_BUILDS = 8


def builds_dir() -> Path | None:
    """Where builds are kept by their inputs' digest, or None when turned off."""
    env = os.environ.get("WASMKEEP_PY_BUILD_CACHE", "").strip()
    if env.lower() == "off":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wasmkeep" / "python-builds"


def _keep(component: Path, digest: str) -> None:
    """Keeps a build under its inputs' digest (best effort: a cache that
    cannot be written never fails the build), and the newest few only."""
    store = builds_dir()
    if store is None:
        return
    try:
        store.mkdir(parents=True, exist_ok=True)
        tmp = store / f".{digest}.{os.getpid()}.tmp"
        shutil.copyfile(component, tmp)
        os.replace(tmp, store / f"{digest}.wasm")
        kept = sorted(store.glob("*.wasm"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP_BUILDS:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _kept(digest: str) -> Path | None:
    store = builds_dir()
    path = None if store is None else store / f"{digest}.wasm"
    if path is None or not path.is_file():
        return None
    try:
        os.utime(path)  # the newest used is kept longest
    except OSError:
        pass
    return path


def _componentize_cmd() -> list[str]:
    if importlib.util.find_spec("componentize_py") is not None:
        # The wheel has no __main__; its console script calls script().
        launcher = "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())"
        return [sys.executable, "-c", launcher]
    exe = shutil.which("componentize-py")
    if exe:
        return [exe]
    raise BuildError(
        f"componentize-py is not installed: pip install componentize-py=={COMPONENTIZE_PY_VERSION} "
        "(in the environment you run the build command from)"
    )


def _componentize_version(cmd: list[str]) -> str:
    try:
        from importlib.metadata import version

        return version("componentize-py")
    except Exception:  # noqa: BLE001 (fall back to asking the binary)
        out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, check=False)
        return out.stdout.strip() or "unknown"


def _is_venv(d: Path) -> bool:
    return (d / "pyvenv.cfg").exists()


def _copy_tree(src: Path, dst: Path) -> None:
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {
            n
            for n in names
            if n in _SKIP_DIRS or n.startswith(".") or n.endswith((".pyc", ".so", ".pyd")) or _is_venv(Path(directory) / n)
        }

    shutil.copytree(src, dst, ignore=ignore, dirs_exist_ok=True)


def _stage(app: Path, paths: list[Path], stage: Path) -> None:
    """Copies what goes into the component into `stage`."""
    app_dir = app.parent
    for entry in sorted(app_dir.iterdir()):
        if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
            continue
        if entry.is_file() and entry.suffix == ".py":
            shutil.copy2(entry, stage / entry.name)
        elif entry.is_dir() and (entry / "__init__.py").exists() and not _is_venv(entry):
            _copy_tree(entry, stage / entry.name)
    sdk = stage / "wasmkeep_actor"
    sdk.mkdir()
    for entry in _SDK.iterdir():
        if entry.name in _HOST_ONLY:
            continue
        if entry.is_file() and entry.suffix in (".py", ".typed"):
            shutil.copy2(entry, sdk / entry.name)
    for p in paths:
        if not p.is_dir():
            raise BuildError(f"-p {p}: not a directory")
        _copy_tree(p, stage)
    (stage / f"{ENTRY}.py").write_text(
        "# Written by `python -m wasmkeep_actor build`: componentize-py exports this module's `Events`.\n"
        f"import {app.stem} as _app\n"
        "from wasmkeep_actor._entry import events_for\n\n"
        "Events = events_for(_app)\n"
    )


def _explain_outside_event(detail: str, app_path: Path) -> str | None:
    """A host call made while the module is imported fails the build with
    OutsideEventError: say so in a few lines, with the line that made it,
    instead of componentize-py's output (two copies of the traceback)."""
    m = re.search(r"OutsideEventError: ([^\n]+)", detail)
    if not m:
        return None
    where = ""
    frames = re.findall(r'File "/0/([^"]+)", line (\d+), in [^\n]*\n(?: {4}([^\n]*)\n)?', detail)
    for path, line, code in frames:
        if path.startswith("wasmkeep_actor/") or path == f"{ENTRY}.py":
            continue
        where = f"\n  {path}, line {line}" + (f": {code.strip()}" if code.strip() else "")
    return f"{app_path.name} calls the host while it is imported (at build time):{where}\n{m.group(1)}"


def _digest(stage: Path, wit: Path, cpy_version: str) -> str:
    h = hashlib.sha256()
    h.update(f"componentize-py {cpy_version}\n".encode())
    for root in (stage, wit):
        for f in sorted(p for p in root.rglob("*") if p.is_file()):
            h.update(str(f.relative_to(root)).encode() + b"\0")
            h.update(f.read_bytes() + b"\0")
    return h.hexdigest()


def _componentize(
    argv: list[str], cwd: str, env: dict[str, str], app_name: str, cpy_version: str, quiet: bool
) -> subprocess.CompletedProcess[str]:
    """Runs componentize-py: on a terminal under a spinner with the elapsed
    time (its line is cleared when it ends, fails or is interrupted), else
    after the plain line saying what it does (nothing when quiet)."""
    what = f"wasmkeep build: componentizing {app_name} (componentize-py {cpy_version}"
    # The spinner counts the seconds itself (and fits 80 columns without the
    # estimate); the plain line says how many to expect.
    with spinner(f"{what})", tty=False if quiet else None) as spinning:
        if not spinning and not quiet:
            print(f"{what}, ~15 s)", file=sys.stderr)
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, env=env)


def _stamp(output: Path) -> Path:
    return output.with_name(f".{output.name}.inputs")


def _stamp_text(digest: str, app: Path, paths: list[Path]) -> str:
    """The stamp beside a build: its inputs' digest, then what it was built
    from (so that a test harness can tell a component older than its sources)."""
    return digest + "\n" + json.dumps({"module": str(app), "paths": [str(p) for p in paths]}) + "\n"


def _stamp_digest(stamp: Path) -> str:
    lines = stamp.read_text().splitlines()
    return lines[0].strip() if lines else ""


class StaleComponentError(BuildError):
    """A component is older than the sources it was built from."""


# Components this process found fresh, by what their freshness depends on:
# a test host is made for every test, and staging and hashing the sources
# each time cost more than the test.
_FRESH: set[tuple[str, int, int, int]] = set()


def _newest_source(app: Path, paths: list[Path]) -> int:
    """The newest modification time (ns) of the Python files and WIT the
    component is built from: the module's folder, the -p folders, the SDK."""
    newest = 0
    for root in [app.parent, *paths, _SDK]:
        for f in root.rglob("*"):
            if f.suffix in (".py", ".wit"):
                try:
                    newest = max(newest, f.stat().st_mtime_ns)
                except OSError:
                    pass
    return newest


def check_fresh(component: str | os.PathLike[str]) -> None:
    """Raises `StaleComponentError` when `component` was built by this
    command from sources that changed since (its stamp says which module);
    does nothing for a component without such a stamp (built elsewhere, or
    by an older SDK) or whose module is gone."""
    out = Path(component).resolve()
    stamp = _stamp(out)
    try:
        lines = stamp.read_text().splitlines()
        built_from = json.loads(lines[1]) if len(lines) > 1 else None
    except (OSError, ValueError):
        return
    if not isinstance(built_from, dict) or not isinstance(built_from.get("module"), str):
        return
    app = Path(built_from["module"])
    paths = [Path(p) for p in built_from.get("paths") or [] if isinstance(p, str)]
    wit = _SDK / "wit"
    if not app.is_file() or not all(p.is_dir() for p in paths) or not (wit / "actor.wit").exists():
        return
    try:
        seen = (str(out), stamp.stat().st_mtime_ns, out.stat().st_mtime_ns, _newest_source(app, paths))
    except OSError:
        return
    if seen in _FRESH:
        return
    with tempfile.TemporaryDirectory(prefix="wasmkeep-check-") as tmp:
        stage = Path(tmp)
        try:
            _stage(app, paths, stage)
            digest = _digest(stage, wit, _componentize_version(_componentize_cmd()))
        except (OSError, BuildError):
            return
    if digest == lines[0].strip():
        _FRESH.add(seen)
    else:
        raise StaleComponentError(
            f"{out.name} is older than its sources: {app.name}, the files beside it or the SDK changed since it was "
            f"built; rebuild it: python -m wasmkeep_actor build {app} -o {out}"
            + "".join(f" -p {p}" for p in paths)
        )


def build(
    app: str | os.PathLike[str],
    output: str | os.PathLike[str],
    paths: list[str] | None = None,
    force: bool = False,
    quiet: bool = False,
) -> BuildResult:
    """Builds the actor module `app` into the component `output`."""
    started = time.monotonic()
    app_path = Path(app).resolve()
    out = Path(output).resolve()
    if not app_path.exists():
        raise BuildError(f"{app}: no such file (give the module that defines your Actor subclass, e.g. app.py)")
    if app_path.suffix != ".py" or not app_path.is_file():
        raise BuildError(f"{app}: not a Python file (give the module that defines your Actor subclass, e.g. app.py)")
    if not app_path.stem.isidentifier():
        raise BuildError(f"{app}: {app_path.stem!r} is not a valid module name: rename the file (letters, digits, _)")
    wit = _SDK / "wit"
    if not (wit / "actor.wit").exists():
        raise BuildError(f"the SDK's WIT is missing ({wit / 'actor.wit'}): reinstall wasmkeep-actor")
    cmd = _componentize_cmd()
    cpy_version = _componentize_version(cmd)
    with tempfile.TemporaryDirectory(prefix="wasmkeep-build-") as tmp:
        stage = Path(tmp) / "stage"
        stage.mkdir()
        extra = [Path(p).resolve() for p in paths or []]
        _stage(app_path, extra, stage)
        digest = _digest(stage, wit, cpy_version)
        stamp = _stamp(out)
        if not force and out.exists() and stamp.exists() and _stamp_digest(stamp) == digest:
            fresh = _stamp_text(digest, app_path, extra)
            if stamp.read_text() != fresh:
                stamp.write_text(fresh)  # an older SDK's stamp: now it says what it was built from
            return BuildResult(out, True, time.monotonic() - started, out.stat().st_size)
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tmp) / "out.wasm"
        kept = None if force else _kept(digest)
        if kept is not None:
            shutil.copyfile(kept, partial)
            shutil.move(str(partial), out)
            stamp.write_text(_stamp_text(digest, app_path, extra))
            return BuildResult(out, False, time.monotonic() - started, out.stat().st_size, reused=True)
        argv = [*cmd, "-d", str(wit), "-w", "actor", "componentize", "-p", str(stage), ENTRY, "-o", str(partial)]
        # No Rust backtraces: the Python traceback is what tells the user what to fix.
        env = {**os.environ, "RUST_BACKTRACE": "0", "RUST_LIB_BACKTRACE": "0"}
        r = _componentize(argv, tmp, env, app_path.name, cpy_version, quiet)
        if r.returncode != 0 or not partial.exists():
            detail = (r.stderr or r.stdout).strip().split("\nStack backtrace:")[0].rstrip()
            outside = _explain_outside_event(detail, app_path)
            if outside:
                raise BuildError(outside)
            hint = ""
            if "ModuleNotFoundError" in detail:
                hint = (
                    "\nOnly your module's folder and the SDK go into the component: put other pure-Python modules "
                    "beside it or pass their folder with -p (modules with C extensions cannot run in a component)."
                )
            raise BuildError(
                f"componentize-py failed on {app_path.name} (exit {r.returncode}). It imports your module at build "
                f"time; the error:\n{detail}{hint}"
            )
        _keep(partial, digest)
        shutil.move(str(partial), out)
        stamp.write_text(_stamp_text(digest, app_path, extra))
    return BuildResult(out, False, time.monotonic() - started, out.stat().st_size)
