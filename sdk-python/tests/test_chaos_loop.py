"""`run_chaos` is the host library's loop (the testing crate's, as the C
harness's), which calls the body, a Python function, with the GIL held: the
host is free for the body's own calls while it runs (even the ones that
restart it), the body's exception is kept as the failure's cause, what is not
an `Exception` goes through as it is, and a host that cannot be reset says
so by kind. Each case ends with the host out of chaos."""

import threading
import time

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
    assert caught.value.seed == 1, "the seed it was to run"  # type: ignore[attr-defined]
    assert ran == []


def test_a_body_that_leaves_a_thread_using_the_host_gets_a_host_error_of_kind_busy(wasmkeep_host):
    # The thread calls the host for a second after the body returned: when
    # the loop needs the host (to end the seed's chaos) the thread is inside
    # one of its methods. Before, pyo3's PanicException ("Already borrowed").
    stop = threading.Event()
    calls = threading.Event()

    def keep_calling(host):
        actor = host.actor("probe", "t")
        while not stop.is_set():
            actor.get("/bump")
            calls.set()

    threads = []

    def body(host):
        threads.append(threading.Thread(target=keep_calling, args=(host,)))
        threads[-1].start()
        calls.wait(30)
        time.sleep(0.05)

    try:
        caught = None
        # The thread is inside a call nearly all the time; a few tries make
        # the test independent of where the switch falls.
        for _ in range(20):
            try:
                run_chaos(wasmkeep_host, [4], body)
            except HostError as e:
                caught = e
                break
            finally:
                stop.set()
                for t in threads:
                    t.join()
                stop.clear()
                calls.clear()
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert caught is not None, "the loop found the host in use"
    assert caught.kind == "busy"  # type: ignore[attr-defined]
    assert caught.seed == 4  # type: ignore[attr-defined]
    assert wasmkeep_host.chaos_seed is None, "the chaos ended"
    assert run_chaos(wasmkeep_host, [5], lambda h: None) == 1, "the host still works"


def test_a_seed_that_is_not_one_is_refused_before_any_seed_runs(wasmkeep_host):
    ran = []
    with pytest.raises(ValueError):
        run_chaos(wasmkeep_host, [1, -1], lambda h: ran.append(1))
    with pytest.raises(ValueError):
        run_chaos(wasmkeep_host, [2**64], lambda h: ran.append(1))
    assert ran == []
