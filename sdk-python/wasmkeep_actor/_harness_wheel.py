"""Where the test harness's wheel (`wasmkeep-actor-harness`, which also
carries the host binary `wasmkeep-shim`) installs, for the messages shown
when it is missing: `pip install "wasmkeep-actor[testing]"` finds no wheel
elsewhere and says only "from versions: none"."""

from __future__ import annotations

import platform
import sys

#: The one harness wheel's tag: cp311-abi3-manylinux_2_28_x86_64.
COVERS = "CPython 3.11 or newer on Linux x86_64 with glibc 2.28 or newer"
MIN_PYTHON = (3, 11)
MIN_GLIBC = (2, 28)
INSTALL = 'pip install "wasmkeep-actor[testing]"'


def _glibc() -> tuple[int, int] | None:
    lib, version = platform.libc_ver()
    if lib != "glibc":
        return None
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        return None
    return (major, minor)


def this_python() -> str:
    """This interpreter and platform, in the words of `COVERS`."""
    v = sys.version_info
    impl = platform.python_implementation()
    system, machine = platform.system(), platform.machine()
    glibc = _glibc()
    libc = f"glibc {glibc[0]}.{glibc[1]}" if glibc else "no glibc"
    where = f"{system} {machine} with {libc}" if system == "Linux" else f"{system} {machine}"
    return f"{impl} {v.major}.{v.minor}.{v.micro} on {where}"


def covered() -> bool:
    """Whether the harness wheel installs on this interpreter and platform."""
    glibc = _glibc()
    return (
        platform.python_implementation() == "CPython"
        and sys.version_info[:2] >= MIN_PYTHON
        and platform.system() == "Linux"
        and platform.machine() in ("x86_64", "AMD64")
        and glibc is not None
        and glibc >= MIN_GLIBC
    )


def missing(what: str) -> str:
    """The message for a missing harness: `what` is missing, the install
    line, and which Pythons and platforms the wheel covers, with this one."""
    if covered():
        return f"{what}: {INSTALL} (the harness wheel is for {COVERS}; this is {this_python()})"
    return (
        f"{what}, and the harness wheel (wasmkeep-actor-harness) is not made for this Python: it is for {COVERS}, "
        f"and this is {this_python()}, so {INSTALL} finds no wheel for it (pip says 'from versions: none'). "
        "Use a Python and a platform it covers."
    )
