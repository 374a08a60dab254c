"""HTTP requests routed to an actor, and its answers.

`on_request` returns the answer: a `Response`, a `str` (200, text/plain), a
`dict` or `list` (200, JSON) or `bytes` (200, application/octet-stream). To
answer before the event ends (before a durable delete, say), call
`request.respond(...)` and return None.
"""

from __future__ import annotations

import json as _json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, Union
from urllib.parse import parse_qsl, urlsplit

__all__ = ["Headers", "Request", "Response", "ResponseLike"]

#: Response headers: (name, value) pairs in order, or a mapping.
Headers = Union[Sequence["tuple[str, str]"], Mapping[str, str]]


@dataclass
class Response:
    """The actor's answer: status, headers and a body (str is sent as UTF-8).

        Response.text("not found", 404)
        Response.json({"n": 1})
        Response(204)
    """

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes | str = b""

    @classmethod
    def text(cls, body: str, status: int = 200, headers: Headers | None = None) -> Response:
        """A text/plain answer in UTF-8."""
        return cls(status, [("content-type", "text/plain; charset=utf-8"), *_pairs(headers)], body)

    @classmethod
    def json(cls, value: Any, status: int = 200, headers: Headers | None = None) -> Response:
        """A JSON answer."""
        return cls(status, [("content-type", "application/json"), *_pairs(headers)], _json.dumps(value))

    @classmethod
    def binary(cls, body: bytes, status: int = 200, content_type: str = "application/octet-stream") -> Response:
        """A binary answer."""
        return cls(status, [("content-type", content_type)], body)

    @classmethod
    def not_kept(cls, err: Exception) -> Response:
        """The answer when what a request would acknowledge is not known to be
        kept (`storage.flush`, `exec_durable` or `delete_self_durable` raised
        `Internal`): 503 with `retry-after: 1` and `wasmkeep-failure:
        not-acknowledged`, the kind the host names the same failure by in its
        own answers, so that a client knows to retry. `request.respond` and
        the answer `on_request` returns become it by themselves when the
        writes before the answer were not kept; a failed durable delete, which
        may be called again, answers it too:

            try:
                storage.delete_self_durable()
            except Internal as e:
                return Response.not_kept(e)
        """
        return cls.text(
            f"the writes of this request are not known to be kept ({err}); try again",
            503,
            {"retry-after": "1", "wasmkeep-failure": "not-acknowledged"},
        )

    def body_bytes(self) -> bytes:
        return self.body.encode() if isinstance(self.body, str) else bytes(self.body)


#: What `on_request` may return.
ResponseLike = Union[Response, str, bytes, dict, list, None]  # type: ignore[type-arg]


def _pairs(h: Headers | None) -> list[tuple[str, str]]:
    if h is None:
        return []
    if isinstance(h, Mapping):
        return [(str(k), str(v)) for k, v in h.items()]
    return [(str(k), str(v)) for k, v in h]


def to_response(answer: ResponseLike) -> Response:
    """The `Response` for whatever `on_request` returned."""
    if isinstance(answer, Response):
        return answer
    if isinstance(answer, str):
        return Response.text(answer)
    if isinstance(answer, (bytes, bytearray, memoryview)):
        return Response.binary(bytes(answer))
    if isinstance(answer, (dict, list)):
        return Response.json(answer)
    raise TypeError(
        f"on_request returned a {type(answer).__name__}: return a Response, str, bytes, dict or list "
        "(or call request.respond(...) and return None)"
    )


class Request:
    """A request for `/<class>/<name><path>`."""

    __slots__ = ("_send", "_send_now", "body", "headers", "method", "path", "responded")

    def __init__(
        self,
        method: str,
        path: str,
        headers: list[tuple[str, str]],
        body: bytes,
        send: Callable[[Response], None] | None = None,
        send_now: Callable[[Response], None] | None = None,
    ) -> None:
        self.method = method
        #: What follows `/<class>/<name>`, with the query string: `/`, `/items?page=2`.
        self.path = path
        #: Header (name, value) pairs as received.
        self.headers = headers
        self.body = body
        #: Whether the answer was sent (by `respond`).
        self.responded = False
        # `send` answers once the event's writes are kept; `send_now` at once.
        self._send = send
        self._send_now = send_now or send

    def __repr__(self) -> str:
        return f"Request({self.method} {self.path}, {len(self.body)} bytes)"

    @property
    def pathname(self) -> str:
        """The path without its query string: `/items` for `/items?page=2`."""
        return urlsplit(self.path).path

    @property
    def query(self) -> dict[str, str]:
        """The query string's parameters (decoded); the first value of a repeated name."""
        out: dict[str, str] = {}
        for k, v in parse_qsl(urlsplit(self.path).query, keep_blank_values=True):
            out.setdefault(k, v)
        return out

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first value of a header (names compare case-insensitively)."""
        n = name.lower()
        for k, v in self.headers:
            if k.lower() == n:
                return v
        return default

    def text(self) -> str:
        """The body as UTF-8 text."""
        return self.body.decode()

    def json(self) -> Any:
        """The body parsed as JSON (raises `json.JSONDecodeError` when it is not)."""
        return _json.loads(self.body)

    def respond(self, answer: ResponseLike) -> None:
        """Sends the answer now, before the event ends, once the event's writes
        so far are kept (`storage.flush()`): a 200 then promises what it
        acknowledges, in a cluster too. If they are not known to be kept, the
        client is answered 503 (with `retry-after`) instead, so it retries; an
        answer of 500 or more goes out as it is. It goes out whatever the event
        does afterwards (a delete, an exception). Then return None from
        `on_request`. Raises RuntimeError when an answer was already sent."""
        self._respond(answer, self._send)

    def respond_before_kept(self, answer: ResponseLike) -> None:
        """Like `respond`, but without waiting for the event's writes to be
        kept: in a cluster they are uploaded when the event ends, after the
        answer, and may be lost. For answers that acknowledge no write."""
        self._respond(answer, self._send_now)

    def _respond(self, answer: ResponseLike, send: Callable[[Response], None] | None) -> None:
        if self.responded:
            raise RuntimeError("the response to this request was already sent")
        if send is None:
            raise RuntimeError("this request has no way to answer (it was made outside on_request)")
        response = to_response(answer)
        self.responded = True
        send(response)
