"""A stand-in for a payment provider's API, for the account example: the
`billing` class takes calls only (access "internal"). `{"cancel": name}`
cancels that account's subscription; cancelling twice is harmless."""

from __future__ import annotations

import json

from wasmkeep_actor import Actor, Address, context, storage


class Billing(Actor):
    def on_init(self) -> None:
        storage.exec("CREATE TABLE cancellations(account TEXT PRIMARY KEY, at INTEGER NOT NULL)")

    def on_call(self, payload: bytes, caller: Address | None) -> str:
        account = json.loads(payload)["cancel"]
        changed = storage.exec("INSERT OR IGNORE INTO cancellations VALUES (?, ?)", account, context.now_ms())
        return json.dumps({"status": "cancelled" if changed else "already cancelled"})
