"""The deliberately wrong variant of account.py that the chaos test
(tests/test_chaos.py) must catch: `DELETE /` cancels the subscription first
and deletes durably after, so a delete that then fails (`Internal`: not
known to be durable) leaves an account that may still exist with its
subscription cancelled. Everything else is account.py's.

    python -m wasmkeep_actor build account_cancel_first.py -o account_cancel_first.wasm
"""

from __future__ import annotations

from account import Account, cancel_subscription, is_open, refuse_missing

from wasmkeep_actor import Internal, Request, Response, storage


class CancelFirstAccount(Account):
    def on_request(self, request: Request) -> Response:
        if (request.method, request.pathname) == ("DELETE", "/"):
            return close_cancelling_first()
        return super().on_request(request)


def close_cancelling_first() -> Response:
    if not is_open():
        return refuse_missing()
    answer = cancel_subscription()  # WRONG: before the delete is durable
    try:
        storage.delete_self_durable()
    except Internal as e:
        return Response.text(f"the account could not be closed for sure ({e}); retry DELETE", 503)
    return answer


actor = CancelFirstAccount
