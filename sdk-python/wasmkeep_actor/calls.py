"""Calls to other actors of the same app. The caller waits; the callee runs
`on_call` in its own mailbox.

    from wasmkeep_actor import calls, Address

    answer = calls.call(Address("inventory", "main"), b"reserve 3")
    stock = calls.call_json(("inventory", "main"), {"op": "count"})
"""

from __future__ import annotations

import json as _json
from typing import Any, Union

from ._wit import Err
from ._wit import calls as _c
from ._wit import types as _t
from .context import Address
from .errors import CallError, CallFailed, CallRefused, CallRejected, call_error_from_wit

__all__ = ["CallError", "CallFailed", "CallRefused", "CallRejected", "Target", "call", "call_json", "call_text"]

#: Whom to call: an `Address`, or a `(class, name)` pair.
Target = Union[Address, "tuple[str, str]"]


def call(target: Target, payload: bytes | str = b"") -> bytes:
    """Runs `on_call` on the target actor (creating it if its class allows)
    and returns its answer's bytes. `str` payloads are sent as UTF-8.

    Raises `CallRefused`, `CallRejected` or `CallFailed` (all `CallError`).
    """
    cls, name = target
    data = payload.encode() if isinstance(payload, str) else bytes(payload)
    try:
        return _c.call(_t.Address(cls, name), data)
    except Err as e:
        raise call_error_from_wit(e.value) from None


def call_text(target: Target, payload: bytes | str = b"") -> str:
    """`call`, with the answer decoded as UTF-8."""
    return call(target, payload).decode()


def call_json(target: Target, payload: Any) -> Any:
    """`call` with a JSON payload and a JSON answer."""
    return _json.loads(call(target, _json.dumps(payload)))
