"""An account whose external subscription is cancelled only once the account
is durably deleted, and that late webhooks cannot bring back.

- `PUT /` with a plan name opens the account (or changes its plan).
- `GET /` shows it.
- `POST /webhook` records a payment provider's event, for an open account
  only: for an address that was deleted before, `context.previous_deletion()`
  says so and the webhook is refused with 410 Gone (the empty database the
  request itself created is dropped again, so nothing is recreated).
- `DELETE /` closes it: `storage.delete_self_durable()` first, and only once
  that returned is the subscription cancelled at the provider (here the
  `billing` actor, billing.py, stands in for the provider's API). If the
  delete is not known to be durable (`Internal`) nothing is cancelled and the
  client is told to retry; a retry that finds the account already deleted
  finishes the job (cancelling is idempotent).
"""

from __future__ import annotations

from wasmkeep_actor import Actor, Internal, Request, Response, calls, context, log, storage

BILLING = ("billing", "provider")


class Account(Actor):
    def on_request(self, request: Request) -> Response:
        route = (request.method, request.pathname)
        if route == ("PUT", "/"):
            return open_account(request.text().strip())
        if route == ("GET", "/"):
            return show()
        if route == ("POST", "/webhook"):
            return webhook(request.text())
        if route == ("DELETE", "/"):
            return close()
        return Response.text("use PUT /, GET /, POST /webhook or DELETE /", 405)


def is_open() -> bool:
    """Whether this address holds an open account (a new database has no table)."""
    return storage.query_one("SELECT 1 FROM sqlite_schema WHERE name = 'account'") is not None


def open_account(plan: str) -> Response:
    if not plan:
        return Response.text("send the plan name in the body", 400)
    storage.exec(
        """
        CREATE TABLE IF NOT EXISTS account(id INTEGER PRIMARY KEY CHECK (id = 1), plan TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS events(body TEXT NOT NULL);
        """
    )
    storage.exec("INSERT INTO account VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET plan = excluded.plan", plan)
    return Response.text(f"open, plan {plan}")


def show() -> Response:
    if not is_open():
        return refuse_missing()
    row = storage.query_one("SELECT plan, (SELECT count(*) FROM events) AS events FROM account")
    assert row is not None
    return Response.json({"plan": row.plan, "events": row.events})


def webhook(body: str) -> Response:
    if not is_open():
        # The late-write guard: a webhook never creates an account.
        return refuse_missing()
    storage.exec("INSERT INTO events VALUES (?)", body)
    return Response.text("recorded")


def refuse_missing() -> Response:
    """Answers a request for an account that is not open, and drops the empty
    database the request itself created, so that nothing is left behind."""
    d = context.previous_deletion()
    storage.delete_self()
    if d is not None:
        return Response.text(f"this account was closed at {d.at.isoformat()} ({d.cause.value}); ignored", 410)
    return Response.text("no such account: open it with PUT / first", 404)


def close() -> Response:
    if not is_open():
        if context.previous_deletion() is None:
            return refuse_missing()
        # Deleted already (an earlier DELETE whose answer was lost or said
        # "retry"): make sure the subscription is cancelled too.
        storage.delete_self()
        return cancel_subscription()
    try:
        storage.delete_self_durable()
    except Internal as e:
        # Not known to be durable: cancelling now could cancel the
        # subscription of an account that still exists. Let the client retry.
        return Response.text(f"the account could not be closed for sure ({e}); retry DELETE", 503)
    # Only now is the deletion durable: cancelling the subscription is safe.
    return cancel_subscription()


def cancel_subscription() -> Response:
    me = context.self_address()
    answer = calls.call_json(BILLING, {"cancel": me.name})
    log.info("account closed; subscription", answer["status"])
    return Response.json({"closed": True, "subscription": answer["status"]})
