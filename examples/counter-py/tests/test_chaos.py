"""The counter `new` writes under seeded chaos, on one node and on two: a
client that retries every 5xx (a failed removal, an answer lost after the
POST counted, a failed upload, a node cut off) never sees an acknowledged
count undone. A retried POST may count twice (the counter has no operation
ids; see examples/bank-py for one that does), but nothing acknowledged is
lost: the SDK answers only once the count is kept (ADR 019).

`WASMKEEP_CHAOS_SEED=<seed> pytest tests/test_chaos.py` replays a failing seed."""

import os

import pytest

from wasmkeep_actor.testing import TestHost, run_chaos

SEEDS = range(100)


def answered(send):
    """Sends until the answer is not a 5xx, as a client that retries would."""
    for _ in range(30):
        r = send()
        if r.status < 500:
            return r
    raise AssertionError(f"still {r.status} after 30 tries: {r.text()}")


def life(host: TestHost) -> None:
    c = host.actor("counter", "c")
    acknowledged = 0  # the highest count a 200 showed since the last 200 DELETE
    for step in "PPGDPG":
        if step == "P":
            r = answered(c.post)
            assert r.status == 200, f"POST: {r.status} {r.text()}"
            n = int(r.text())
            assert n > acknowledged, f"a POST answered {n} after {acknowledged} was acknowledged: an acknowledged POST was lost"
            acknowledged = n
        elif step == "G":
            n = int(answered(c.get).text())
            assert n >= acknowledged, f"GET answered {n} after {acknowledged} was acknowledged: an acknowledged POST was lost"
        else:
            for _ in range(30):
                r = c.delete()
                if r.status == 200:
                    acknowledged = 0
                    break
                assert r.status >= 500, f"DELETE: {r.status} {r.text()}"
            else:
                raise AssertionError("a retried DELETE never answered 200")


@pytest.mark.parametrize("nodes", [1, 2])
def test_nothing_acknowledged_is_lost(wasmkeep_host_factory, wasmkeep_classes, nodes):
    host = wasmkeep_host_factory(wasmkeep_classes, nodes=nodes)
    ran = run_chaos(host, SEEDS, life)
    assert ran == len(SEEDS) or os.environ.get("WASMKEEP_CHAOS_SEED"), f"{ran} seeds ran"
