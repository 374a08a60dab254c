"""The bank under seeded chaos, on one node and on two: a client deposits and
withdraws with operation ids, retrying every 5xx (a lost answer, a failed
upload, a node cut off) until it is answered, and after every answer the
balance is exactly what the acknowledged operations and the interest paid
make it. A variant whose deposits record their id only after the answer
went out is caught on both (on one node by the step that crashes the host
right after an answer), and a failing seed replays the identical record 20
times.

`WASMKEEP_CHAOS_SEED=<seed> pytest tests/test_chaos.py` replays a seed."""

import json
import os

import pytest

from wasmkeep_actor.testing import ChaosFailure, TestHost, run_chaos

SEEDS = range(100)


def answered(send):
    """Sends until the answer is not a 5xx, as a client that retries would."""
    for _ in range(30):
        r = send()
        if r.status < 500:
            return r
    raise AssertionError(f"still {r.status} after 30 tries: {r.text()}")


def life(host: TestHost) -> None:
    a = host.actor("bank", "acct")
    moved = 0
    for i in range(1, 11):
        withdraw = i % 4 == 0
        path = f"/withdraw?op=w{i}&amount={i * 5}" if withdraw else f"/deposit?op=d{i}&amount={i * 10}"
        r = answered(lambda: a.post(path))
        assert r.status == 200, f"{path}: {r.status} {r.text()}"
        moved += -i * 5 if withdraw else i * 10
        s = json.loads(answered(lambda: a.get("/")).text())
        assert s["balance"] == moved + s["interest"], (
            f"after {path}: balance {s['balance']}, expected {moved + s['interest']} "
            f"({moved} moved + {s['interest']} interest)"
        )


@pytest.mark.parametrize("nodes", [1, 2])
def test_every_acknowledged_operation_is_kept(wasmkeep_host_factory, wasmkeep_classes, nodes):
    host = wasmkeep_host_factory(wasmkeep_classes, nodes=nodes)
    ran = run_chaos(host, SEEDS, life)
    assert ran == len(SEEDS) or os.environ.get("WASMKEEP_CHAOS_SEED"), f"{ran} seeds ran"


@pytest.mark.parametrize("nodes", [1, 2])
def test_deposits_that_record_their_id_after_the_answer_are_caught_and_the_seed_replays_exactly(
    wasmkeep_host_factory, broken_classes, nodes
):
    if os.environ.get("WASMKEEP_CHAOS_SEED"):
        pytest.skip("WASMKEEP_CHAOS_SEED replays one seed of the test above")
    host = wasmkeep_host_factory(broken_classes, nodes=nodes)
    with pytest.raises(ChaosFailure) as caught:
        run_chaos(host, SEEDS, life)
    first = caught.value
    for _ in range(20):
        with pytest.raises(ChaosFailure) as again:
            run_chaos(host, [first.seed], life)
        assert again.value.schedule == first.schedule, "the schedule replays"
        assert str(again.value) == str(first), "the outcome replays"
