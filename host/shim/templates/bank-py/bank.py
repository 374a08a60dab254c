"""A bank account whose every 200 is kept, in a cluster too.

- `POST /deposit?op=<id>&amount=<n>` and `POST /withdraw?op=<id>&amount=<n>`
  move money once per operation id: a client that retries after a 503 or a
  lost answer repeats the id, and the retry changes nothing and answers what
  the first try did. A withdrawal beyond the balance is refused with 409, and
  that refusal is kept for its id too.
- `GET /` answers `{"balance": <n>, "interest": <total paid>}`.
- Interest: 1% of the balance (rounded down) every virtual day, paid by the
  alarm, which sets itself again.
- `DELETE /` closes the account with a durable delete.

Nothing here waits for a write by hand: the SDK sends each answer only once
the transaction before it is kept (ADR 019), and answers 503 when it is not
known to be.
"""

from __future__ import annotations

from datetime import timedelta

from wasmkeep_actor import Actor, Request, Response, SqlError, alarms, log, storage

DAY = timedelta(days=1)


def balance() -> int:
    b = storage.query_value("SELECT balance FROM account")
    assert isinstance(b, int)
    return b


class Bank(Actor):
    #: True in the deliberately wrong variant (bank_broken.py): a deposit records
    #: its operation id only after its answer went out, so a host that stops
    #: between the two (a crash) leaves the money moved and the id unknown, and
    #: a client that did not get the answer retries and is counted twice.
    ID_AFTER_ANSWER = False

    def on_init(self) -> None:
        storage.exec(
            """
            CREATE TABLE account(id INTEGER PRIMARY KEY CHECK (id = 1), balance INTEGER NOT NULL);
            INSERT INTO account VALUES (1, 0);
            CREATE TABLE ops(id TEXT PRIMARY KEY, status INTEGER NOT NULL, answer TEXT NOT NULL);
            CREATE TABLE interest(paid INTEGER NOT NULL);
            """
        )
        alarms.set(DAY)

    def on_request(self, request: Request) -> Response:
        try:
            route = (request.method, request.pathname)
            if route == ("GET", "/"):
                paid = storage.query_value("SELECT coalesce(sum(paid), 0) FROM interest")
                return Response.json({"balance": balance(), "interest": paid})
            if route == ("POST", "/deposit"):
                return self.operation(request, "deposit")
            if route == ("POST", "/withdraw"):
                return self.operation(request, "withdraw")
            if route == ("DELETE", "/"):
                storage.delete_self_durable()
                return Response.text("closed")
            return Response.text(
                "use GET /, POST /deposit?op=<id>&amount=<n>, POST /withdraw?op=<id>&amount=<n> or DELETE /", 405
            )
        except SqlError as e:
            # Not known to be done: a 503 asks the client to retry.
            return Response.text(f"{e}; try again", 503)

    def operation(self, request: Request, kind: str) -> Response | None:
        op = request.query.get("op")
        amount_text = request.query.get("amount", "")
        if not op or not amount_text.isdigit() or int(amount_text) <= 0:
            return Response.text("give ?op=<id>&amount=<a positive whole number>", 400)
        amount = int(amount_text)
        record_after = self.ID_AFTER_ANSWER and kind == "deposit"
        with storage.transaction():
            # A retry of an operation already done answers what it answered.
            done = storage.query("SELECT status, answer FROM ops WHERE id = ?", op)
            if done:
                return Response.text(str(done[0].answer), int(done[0].status))
            b = balance()
            if kind == "withdraw" and amount > b:
                status, answer = 409, f"refused: the balance is {b}"
            else:
                delta = amount if kind == "deposit" else -amount
                storage.exec("UPDATE account SET balance = balance + ?", delta)
                status, answer = 200, str(b + delta)
            if not record_after:
                storage.exec("INSERT OR REPLACE INTO ops(id, status, answer) VALUES (?, ?, ?)", op, status, answer)
        if not record_after:
            return Response.text(answer, status)
        # The broken variant's mistake: the id is written after the answer went out.
        request.respond(Response.text(answer, status))
        storage.exec("INSERT OR REPLACE INTO ops(id, status, answer) VALUES (?, ?, ?)", op, status, answer)
        return None

    def on_alarm(self) -> None:
        try:
            with storage.transaction():
                interest = balance() // 100
                storage.exec("UPDATE account SET balance = balance + ?", interest)
                storage.exec("INSERT INTO interest(paid) VALUES (?)", interest)
        except SqlError as e:
            log.warning(f"interest not paid: {e}")
        alarms.set(DAY)
