"""Write wasmkeep actors in Python.

An actor owns one SQLite database (`storage`), one alarm (`alarms`), its
open WebSockets (`sockets`) and may call other actors of its app (`calls`).
The host delivers events one at a time to the methods of an `Actor`
subclass. Build the module into a WebAssembly component with

    python -m wasmkeep_actor build app.py -o app.wasm

and test it under pytest with `wasmkeep_actor.testing`.

The package wraps the WIT package `wasmkeep:actor@0.2.4` (shipped in `wit/`).
"""

from __future__ import annotations

from . import alarms, calls, context, sockets, storage
from .actor import Actor
from .context import Address, Deletion, DeletionCause, LogHandler, log
from .errors import (
    CallError,
    CallFailed,
    CallRefused,
    CallRejected,
    Internal,
    NotAllowed,
    SocketError,
    SqlError,
    SqliteError,
)
from .http import Request, Response, ResponseLike
from .storage import Row, Rows

#: The version of this SDK.
__version__ = "0.2.0"

#: The WIT package the SDK is built on.
WIT_PACKAGE = "wasmkeep:actor@0.2.4"

__all__ = [
    "WIT_PACKAGE",
    "Actor",
    "Address",
    "CallError",
    "CallFailed",
    "CallRefused",
    "CallRejected",
    "Deletion",
    "DeletionCause",
    "Internal",
    "LogHandler",
    "NotAllowed",
    "Request",
    "Response",
    "ResponseLike",
    "Row",
    "Rows",
    "SocketError",
    "SqlError",
    "SqliteError",
    "__version__",
    "alarms",
    "calls",
    "context",
    "log",
    "sockets",
    "storage",
]
