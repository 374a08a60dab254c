"""The account's invariant under seeded chaos:

    the external subscription is cancelled only after the delete is durable,
    and a late webhook recreates nothing.

Each seed runs one account's life (open, a webhook, close, retried while the
close says it is not durable, a late webhook) after a reset of the host,
under its own schedule of failed removals, restarts, hibernations and late
alarms. A failure says the seed and the schedule; `WASMKEEP_CHAOS_SEED=<seed>
pytest tests/test_chaos.py` replays that run alone.

100 seeds by default, a quick inner loop; `WASMKEEP_CHAOS_SEEDS=n` runs n
(the repository's test command runs 1,000)."""

import os
import time

import pytest

from wasmkeep_actor.testing import ChaosFailure, TestHost, run_chaos


def _seed_count() -> int:
    value = os.environ.get("WASMKEEP_CHAOS_SEEDS", "").strip() or "100"
    if not value.isdigit() or int(value) == 0:
        raise ValueError(f"WASMKEEP_CHAOS_SEEDS={value!r}: give how many seeds to run, a number from 1 (default 100)")
    return int(value)


SEEDS = range(_seed_count())


def cancellations(host: TestHost, account: str) -> int:
    """How often the provider (the billing actor) cancelled the account's subscription."""
    return sum(c["account"] == account for c in host.actor("billing", "provider").rows("cancellations"))


def cancelled(host: TestHost, account: str) -> bool:
    """Whether the provider cancelled the account's subscription."""
    return cancellations(host, account) > 0


def lost(response) -> bool:
    """An answer the chaos schedule lost after the event ran (a real client
    sees a 503 or a dropped connection and cannot tell)."""
    return response.header("wasmkeep-chaos") == "lost-answer"


def until_answered(send):
    """Sends until the answer is not a 5xx, as a client that retries would."""
    for _ in range(20):
        r = send()
        if r.status < 500:
            return r
    raise AssertionError(f"still {r.status} after 20 tries: {r.text()}")


def life(host: TestHost) -> None:
    """One account's life, with the invariant checked after each close."""
    a = host.actor("account", "acct")
    assert until_answered(lambda: a.put("/", "pro")).status == 200
    assert until_answered(lambda: a.post("/webhook", "paid")).status == 200
    for attempt in range(1, 11):
        before = cancellations(host, "acct")
        closed = a.delete()
        # Cancelled by this attempt (an earlier one whose answer was lost may
        # have cancelled already: its delete was durable).
        if cancellations(host, "acct") > before and not lost(closed):
            assert closed.status == 200, (
                f"the subscription was cancelled although close attempt {attempt} answered "
                f"{closed.status} ({closed.text()}): the delete was not known to be durable"
            )
            # Deleted, or its removal began (a failed removal is finished
            # before the actor's next event). A host that crashed right after
            # the answer of a close that found the account deleted already
            # (crash-after-answer) never reached the event's end, which
            # carries out its `delete_self`: the empty database the close
            # opened stays, but it holds no account (as account-rust checks).
            status = a.deletion_status()
            gone = not a.exists() and status.status != "not-deleted"
            assert gone or until_answered(lambda: a.get("/")).status in (404, 410), (
                f"cancelled, but the account is {status} and answers {a.get('/').status}"
            )
        if closed.status == 200:
            break
        assert closed.status == 503, f"close attempt {attempt}: {closed.status} {closed.text()}"
    else:
        raise AssertionError("the account was still not closed after 10 attempts")
    assert cancelled(host, "acct"), "a durable close cancels the subscription"
    for _ in range(10):
        # 503 is the host's "try again" (it finishes a failed removal first):
        # the provider retries, as it would.
        late = a.post("/webhook", "paid again")
        # A host that crashed right after the refusal went out never reached
        # the event's end, which carries out its delete_self: the empty
        # database the webhook opened stays, but it holds no account.
        assert not a.exists() or a.get("/").status in (404, 410, 503), (
            f"a late webhook recreates nothing (it answered {late.status})"
        )
        if late.status != 503:
            break
    assert late.status in (404, 410), f"a late webhook is refused: {late.status} {late.text()}"


def test_the_account_holds_its_invariant_under_every_seed(wasmkeep_host):
    started = time.monotonic()
    ran = run_chaos(wasmkeep_host, SEEDS, life)
    assert ran == len(SEEDS) or os.environ.get("WASMKEEP_CHAOS_SEED"), f"{ran} seeds ran"
    print(f"account-py chaos: {ran} seeds in {time.monotonic() - started:.1f} s")


def test_a_variant_that_cancels_before_the_durable_delete_is_caught(wasmkeep_host_factory, cancel_first_classes):
    host = wasmkeep_host_factory(cancel_first_classes)
    with pytest.raises(ChaosFailure) as caught:
        run_chaos(host, SEEDS, life)
    failure = caught.value
    report = str(failure)
    assert f"seed {failure.seed}" in report and f"WASMKEEP_CHAOS_SEED={failure.seed}" in report, report
    assert "fail-removal" in report and "cancelled although" in report, report
    assert any(r.step == "fail-removal" for r in failure.schedule)
    # The seed replays the same run: it fails again, with the same schedule.
    with pytest.raises(ChaosFailure) as again:
        run_chaos(host, [failure.seed], life)
    assert (again.value.seed, again.value.schedule) == (failure.seed, failure.schedule)


def test_the_replay_variable_runs_that_seed_alone(wasmkeep_host_factory, cancel_first_classes, monkeypatch):
    host = wasmkeep_host_factory(cancel_first_classes)
    with pytest.raises(ChaosFailure) as first:
        run_chaos(host, SEEDS, life)
    monkeypatch.setenv("WASMKEEP_CHAOS_SEED", str(first.value.seed))
    seen = []
    with pytest.raises(ChaosFailure) as replayed:
        run_chaos(host, SEEDS, lambda h: (seen.append(1), life(h)))
    assert len(seen) == 1, "only the replayed seed ran"
    assert (replayed.value.seed, replayed.value.schedule) == (first.value.seed, first.value.schedule)
    host.actor("account", "acct").get()
    assert host.end_chaos() == [], "the host is out of chaos after a failure"
