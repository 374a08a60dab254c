"""The actor's open WebSockets. A socket opens with `on_socket_open`; its id
(an int) stays the same for its whole life and is never reused by a host run.

    from wasmkeep_actor import sockets

    sockets.send(socket, "hello")        # str is a text message, bytes a binary one
    sockets.broadcast("someone joined", except_=socket)
"""

from __future__ import annotations

from ._wit import Err
from ._wit import sockets as _s
from ._wit import types as _t
from .errors import SocketError

__all__ = ["SocketError", "broadcast", "close", "open_sockets", "send"]


def _message(message: str | bytes | bytearray | memoryview) -> _t.Message:
    if isinstance(message, str):
        return _t.Message_Text(message)
    if isinstance(message, (bytes, bytearray, memoryview)):
        return _t.Message_Binary(bytes(message))
    raise TypeError(f"a socket message is str (text) or bytes (binary), not {type(message).__name__}")


def send(socket: int, message: str | bytes | bytearray | memoryview) -> None:
    """Sends a text (`str`) or binary (`bytes`) message.
    Raises `SocketError` when the socket is closed, closing, or not this actor's."""
    m = _message(message)
    try:
        _s.send(socket, m)
    except Err:
        raise SocketError(socket) from None


def close(socket: int, code: int = 1000, reason: str = "") -> None:
    """Closes a socket with a close code (1000 normal, 4000-4999 the app's own)
    and a reason; its `on_socket_close` event follows. Raises `SocketError`."""
    try:
        _s.close(socket, code, reason)
    except Err:
        raise SocketError(socket) from None


def open_sockets() -> list[int]:
    """The actor's open sockets."""
    return list(_s.open_sockets())


def broadcast(message: str | bytes, except_: int | None = None) -> int:
    """Sends `message` to every open socket but `except_`; returns how many it reached."""
    m = _message(message)
    n = 0
    for socket in _s.open_sockets():
        if socket == except_:
            continue
        try:
            _s.send(socket, m)
            n += 1
        except Err:
            pass  # closed in the meantime: not reached
    return n
