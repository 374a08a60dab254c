"""The command line: `python -m wasmkeep_actor build app.py -o app.wasm` (also
`wasmkeep-py`), and `python -m wasmkeep_actor serve ...`, which runs the host
binary the harness wheel installs as the `wasmkeep-shim` script."""

from __future__ import annotations

import argparse
import sys

from . import WIT_PACKAGE, __version__


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # serve passes everything after it to the host as it is (argparse would
    # take the host's options for its own).
    if argv[:1] == ["serve"] and argv[1:2] not in (["-h"], ["--help"]):
        return serve(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m wasmkeep_actor", description="Build wasmkeep actors written in Python.")
    parser.add_argument("--version", action="version", version=f"wasmkeep-actor {__version__} ({WIT_PACKAGE})")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build an actor module into a WebAssembly component (componentize-py)")
    b.add_argument("app", help="the module that defines your Actor subclass, e.g. app.py")
    b.add_argument("-o", "--output", required=True, help="the component to write, e.g. app.wasm")
    b.add_argument(
        "-p",
        "--path",
        action="append",
        default=[],
        help="a directory of extra pure-Python modules to include (repeatable)",
    )
    b.add_argument("--force", action="store_true", help="build even when the inputs did not change")
    b.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    sub.add_parser("serve", help="run the host: wasmkeep-shim serve ARGS... (the harness wheel of wasmkeep-actor[testing] carries it)")
    args = parser.parse_args(argv)

    from .build import BuildError, build

    try:
        r = build(args.app, args.output, args.path, force=args.force, quiet=args.quiet)
    except BuildError as e:
        print(f"wasmkeep build: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        if r.skipped:
            what = "unchanged, not rebuilt"
        elif r.reused:
            what = f"the same inputs as a kept build: reused in {r.seconds:.1f} s"
        else:
            what = f"built in {r.seconds:.1f} s"
        print(f"wasmkeep build: {r.output} ({r.size / 1e6:.1f} MB, {what})", file=sys.stderr)
    return 0


def host_binary() -> str | None:
    """The wasmkeep-shim the harness wheel installed beside this Python's
    scripts, else one on PATH."""
    import os
    import shutil
    import sysconfig

    here = os.path.join(sysconfig.get_path("scripts"), "wasmkeep-shim")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("wasmkeep-shim")


def serve(args: list[str]) -> int:
    import os

    shim = host_binary()
    if shim is None:
        from ._harness_wheel import missing

        print(
            "wasmkeep serve: " + missing("no wasmkeep-shim (the host binary, which the harness wheel of wasmkeep-actor[testing] carries)"),
            file=sys.stderr,
        )
        return 2
    os.execv(shim, [shim, "serve", *args])
    return 0  # not reached
