"""`run_chaos` is the host library's loop (the testing crate's, as the C
harness's), which calls the body, a Python function, with the GIL held: the
host is free for the body's own calls while it runs (even the ones that
restart it), the body's exception is kept as the failure's cause, what is not
an `Exception` goes through as it is, and a host that cannot be reset says
so by kind. Each case ends with the host out of chaos."""

import pytest

from wasmkeep_actor.testing import ChaosFailure, HostError, run_chaos


def test_the_body_sees_its_seed_in_order_and_may_restart_the_host(wasmkeep_host):
    seen = []

    def body(host):
        seen.append(host.chaos_seed)
        a = host.actor("probe", "c")
        a.get("/bump")
        host.restart_host()  # the loop holds no borrow of the host while the body runs
        assert a.exists()

    assert run_chaos(wasmkeep_host, [5, 3, 9], body) == 3
    assert seen == [5, 3, 9]
    assert wasmkeep_host.chaos_seed is None


def test_the_failure_keeps_what_the_body_raised_as_its_cause(wasmkeep_host):
    raised = []

    def body(host):
        host.actor("probe", "c").get("/bump")
        raised.append(LookupError("x"))
        raise raised[-1]

    with pytest.raises(ChaosFailure) as caught:
        run_chaos(wasmkeep_host, [2, 3], body)
    assert caught.value.seed == 2
    assert caught.value.__cause__ is raised[0]
    assert len(raised) == 1, "the loop stops at the first failing seed"
    assert wasmkeep_host.chaos_seed is None


def test_an_assertion_without_a_message_is_still_a_failure_with_a_message(wasmkeep_host):
    def body(host):
        assert host.now_ms() < 0

    with pytest.raises(ChaosFailure) as caught:
        run_chaos(wasmkeep_host, [1], body)
    assert isinstance(caught.value.__cause__, AssertionError)
    assert caught.value.message, "the report never has an empty message"


def test_system_exit_goes_through_as_it_is_and_ends_the_chaos(wasmkeep_host):
    def body(host):
        host.actor("probe", "c").get("/bump")
        raise SystemExit(3)

    with pytest.raises(SystemExit) as caught:
        run_chaos(wasmkeep_host, [1, 2], body)
    assert caught.value.code == 3
    assert wasmkeep_host.chaos_seed is None
    assert wasmkeep_host.end_chaos() == []


def test_a_closed_host_cannot_run_chaos_and_says_so_by_kind(wasmkeep_host_factory, wasmkeep_classes):
    host = wasmkeep_host_factory(wasmkeep_classes)
    host.close()
    ran = []
    with pytest.raises(HostError) as caught:
        run_chaos(host, [1], lambda h: ran.append(1))
    assert caught.value.kind == "closed"  # type: ignore[attr-defined]
    assert ran == []


def test_a_seed_that_is_not_one_is_refused_before_any_seed_runs(wasmkeep_host):
    ran = []
    with pytest.raises(ValueError):
        run_chaos(wasmkeep_host, [1, -1], lambda h: ran.append(1))
    with pytest.raises(ValueError):
        run_chaos(wasmkeep_host, [2**64], lambda h: ran.append(1))
    assert ran == []
