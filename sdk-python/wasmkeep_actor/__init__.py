"""Write wasmkeep actors in Python.

An actor owns one SQLite database (`storage`), one alarm (`alarms`), its
open WebSockets (`sockets`) and may call other actors of its app (`calls`).
The host delivers events one at a time to the methods of an `Actor`
subclass. Build the module into a WebAssembly component with

    python -m wasmkeep_actor build app.py -o app.wasm

and test it under pytest with `wasmkeep_actor.testing`.

The package wraps the WIT package `wasmkeep:actor@0.2.1` (shipped in `wit/`).
"""

from __future__ import annotations

import pkgutil

# The test harness's native module (wasmkeep_actor._harness) comes in its own
# wheel; this lets it load from site-packages when the SDK itself is an
# editable install elsewhere.
__path__ = pkgutil.extend_path(__path__, __name__)

from . import alarms, calls, context, sockets, storage  # noqa: E402
from .actor import Actor  # noqa: E402
from .context import Address, Deletion, DeletionCause, log  # noqa: E402
from .errors import (  # noqa: E402
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
from .http import Request, Response, ResponseLike  # noqa: E402
from .storage import Row  # noqa: E402

#: The version of this SDK.
__version__ = "0.2.0"

#: The WIT package the SDK is built on.
WIT_PACKAGE = "wasmkeep:actor@0.2.1"

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
    "NotAllowed",
    "Request",
    "Response",
    "ResponseLike",
    "Row",
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
