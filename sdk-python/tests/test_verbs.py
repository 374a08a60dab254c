"""The harness's verbs over the whole host (issue 15): restart, operator
delete, deletion status, reset, a local cluster (a request to a node, cut
off, the cluster's operator delete, idle expiry, app delete), seeded chaos,
the actor's log on a 500, dataclass rows, and going back in time (history
and restore)."""

from datetime import timedelta

import pytest

from wasmkeep_actor.testing import (
    ChaosFailure,
    ChaosRecord,
    DeletionStatus,
    HistoryPosition,
    HostError,
    Restored,
    chaos_seed_from_env,
    run_chaos,
)


@pytest.fixture
def probe(wasmkeep_host):
    return wasmkeep_host.actor("probe", "p")


@pytest.fixture
def cluster(wasmkeep_host_factory, wasmkeep_classes):
    return wasmkeep_host_factory(wasmkeep_classes, nodes=2)


def test_a_restarted_actor_recovers_from_its_database(probe):
    assert probe.get("/bump").text() == "1"
    probe.restart()
    assert probe.get("/bump").text() == "2"


def test_an_operator_delete_runs_no_guest_code_and_leaves_its_evidence(probe):
    assert probe.deletion_status() == DeletionStatus("not-deleted")
    probe.get("/bump")
    assert probe.operator_delete() == "deleted"
    assert not probe.exists()
    status = probe.deletion_status()
    assert (status.deleted, status.how) == (True, "operator")
    assert status.at is not None and status.at.tzinfo is not None
    assert probe.get("/bump").text() == "1", "the next request meets a new actor"
    assert probe._host.actor("probe", "never").operator_delete() == "absent"


def test_deletion_status_after_a_durable_self_delete(probe):
    probe.get("/rows")
    probe.get("/delete-durable")
    assert probe.deletion_status().how == "self_durable"


def test_a_reset_leaves_nothing_of_the_test_before(wasmkeep_host, probe):
    start = wasmkeep_host.now_ms()
    probe.get("/bump")
    probe.get("/log")
    socket = probe.open_socket("/room")
    wasmkeep_host.advance(timedelta(hours=1))
    wasmkeep_host.faults.fail_removal(1)
    wasmkeep_host.reset()
    assert not probe.exists()
    assert wasmkeep_host.now_ms() == start
    assert wasmkeep_host.logs() == []
    with pytest.raises(HostError) as gone:
        socket.received()
    assert gone.value.kind == "no-such-socket"
    probe.get("/rows")
    assert probe.get("/delete-durable").status == 200, "the armed fault is gone"
    assert probe.get("/bump").text() == "1", "the same classes are loaded again"


def test_a_node_forwards_to_the_holder_and_another_takes_over_when_it_is_cut_off(cluster):
    assert cluster.nodes == 2
    c = cluster.actor("probe", "c")
    assert c.get("/bump", node=1).text() == "1"
    assert c.get("/bump", node=2).text() == "2", "forwarded to node 1, the holder"
    cluster.cut_off(1)
    assert c.get("/bump", node=2).text() == "3", "node 2 restores the bucket's head"
    with pytest.raises(HostError) as no_node:
        c.get("/", node=3)
    assert no_node.value.kind == "no-such-node"


def test_a_clusters_operator_delete_idle_expiry_and_app_delete(cluster):
    doomed = cluster.actor("probe", "doomed")
    doomed.get("/bump")
    assert isinstance(doomed.request_operator_delete(), str)
    assert doomed.deletion_status().how == "operator"
    assert doomed.get("/bump", node=2).text() == "1", "deleted by the operator: a new actor"

    with pytest.raises(ValueError) as too_short:
        cluster.set_expire_after_idle("probe", timedelta(minutes=5))
    assert too_short.value.kind == "bad-argument"  # type: ignore[attr-defined]
    cluster.set_expire_after_idle("probe", timedelta(hours=1))
    idle = cluster.actor("probe", "idle")
    idle.get("/bump")
    cluster.hibernate_all()
    cluster.advance(timedelta(hours=2))
    cluster.run_expiry_passes()  # the moving clock ran it already; again finds nothing
    assert not idle.exists(), "an actor idle past its limit is collected"
    assert idle.deletion_status().how == "expired"

    cluster.delete_app()
    with pytest.raises(HostError) as deleted:
        cluster.actor("probe", "after").get(node=2)
    assert deleted.value.kind == "no-such-app"


def test_cluster_verbs_on_a_single_node_say_what_to_do(wasmkeep_host, probe):
    with pytest.raises(HostError) as app_delete:
        wasmkeep_host.delete_app()
    assert app_delete.value.kind == "needs-cluster"
    with pytest.raises(HostError) as operator_delete:
        probe.request_operator_delete()
    assert operator_delete.value.kind == "needs-cluster"
    with pytest.raises(ValueError) as no_nodes:
        type(wasmkeep_host)({}, nodes=0)
    assert no_nodes.value.kind == "bad-nodes"  # type: ignore[attr-defined]


def test_run_chaos_runs_each_seed_after_a_reset_and_ends_out_of_chaos(wasmkeep_host):
    seen = []

    def body(host):
        a = host.actor("probe", "c")
        seen.append(a.exists())
        assert a.get("/bump").status == 200

    assert run_chaos(wasmkeep_host, range(5), body) == 5
    assert seen == [False] * 5, "each seed starts from a reset host"
    for _ in range(30):
        wasmkeep_host.actor("probe", "c").get("/bump")
    assert wasmkeep_host.end_chaos() == [], "no schedule runs after run_chaos returned"


def test_a_failure_names_its_seed_and_schedule_and_the_seed_replays_it(wasmkeep_host):
    def body(host):
        a = host.actor("probe", "c")
        for _ in range(20):
            a.get("/bump")
        assert host.now_ms() < 0, "boom"

    with pytest.raises(ChaosFailure) as caught:
        run_chaos(wasmkeep_host, [7, 8], body)
    failure = caught.value
    assert isinstance(failure, AssertionError)
    assert failure.seed == 7
    assert failure.schedule and all(isinstance(r, ChaosRecord) for r in failure.schedule)
    report = str(failure)
    assert report.startswith("the test failed under seed 7 (replay it alone with WASMKEEP_CHAOS_SEED=7): boom")
    assert "  the schedule:\n" in report
    assert str(failure.schedule[0]) in report and "test/app:probe/c" in report
    with pytest.raises(ChaosFailure) as again:
        run_chaos(wasmkeep_host, [7], body)
    assert again.value.schedule == failure.schedule
    assert wasmkeep_host.end_chaos() == [], "out of chaos after a failure"


def test_other_exceptions_are_named_and_interrupts_end_the_chaos_too(wasmkeep_host):
    def raises(host):
        raise KeyError("gone")

    with pytest.raises(ChaosFailure, match="KeyError: 'gone'"):
        run_chaos(wasmkeep_host, [1], raises)

    def interrupted(host):
        host.actor("probe", "c").get("/bump")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_chaos(wasmkeep_host, [1], interrupted)
    for _ in range(30):
        wasmkeep_host.actor("probe", "c").get("/bump")
    assert wasmkeep_host.end_chaos() == []


def test_the_replay_variable_runs_one_seed_and_a_bad_one_says_so(wasmkeep_host, monkeypatch):
    seeds = []
    monkeypatch.setenv("WASMKEEP_CHAOS_SEED", "42")
    assert chaos_seed_from_env() == 42
    assert run_chaos(wasmkeep_host, range(100), lambda h: seeds.append(1)) == 1
    assert seeds == [1]
    monkeypatch.setenv("WASMKEEP_CHAOS_SEED", "forty-two")
    with pytest.raises(ValueError, match="not a seed: give the number a failure printed"):
        run_chaos(wasmkeep_host, range(3), lambda h: None)
    monkeypatch.setenv("WASMKEEP_CHAOS_SEED", "")
    assert chaos_seed_from_env() is None


def test_an_answer_of_500_prints_the_actors_log(probe, capsys):
    probe.get("/rows")
    assert probe.get("/raise").status == 500
    err = capsys.readouterr().err
    assert "GET /raise to test/app:probe/p answered 500; what the actor logged" in err
    assert "boom from on_request" in err
    assert all("[error test/app:probe/p]" in line or not line.startswith("  [") for line in err.splitlines())


def test_under_chaos_a_5xx_is_explained_only_for_the_seed_that_fails(wasmkeep_host, capsys):
    def passing(host):
        host.actor("probe", "p").get("/raise")  # a 5xx, expected here

    run_chaos(wasmkeep_host, [1, 2, 3], passing)
    assert "answered 5" not in capsys.readouterr().err, "passing seeds print nothing"

    def failing(host):
        host.actor("probe", "p").get("/raise")
        raise AssertionError("the body failed")

    with pytest.raises(ChaosFailure):
        run_chaos(wasmkeep_host, [4], failing)
    assert "GET /raise to test/app:probe/p answered 5" in capsys.readouterr().err, "the failing seed's are printed"


def test_query_rows_as_dataclasses_and_named_tuples(probe):
    r = probe.get("/rows-as").json()
    assert r["rows"] == ["KvRow(k='a', v=1, note='none')", "KvRow(k='b', v=2, note='none')"]
    assert r["types"] == ["KvRow"]
    assert r["one"] == "KvRow(k='b', v=2, note='x')"
    assert r["none"] == "None"
    assert r["tuple"] == "[KvTuple(k='a', v=1)]"
    assert "column(s) ['nope'] have no field in KvRow" in r["extra"]
    assert "field(s) ['v'] of KvRow are not among the query's columns ['k']" in r["missing"]
    assert "give a dataclass or a NamedTuple" in r["not_a_dataclass"]


def test_a_chaos_failure_pickles_with_its_seed_and_schedule():
    import pickle

    text = "before event 2 (to test/app:probe/c on node 1): clock +500 ms, due alarms run"
    record = ChaosRecord(2, "test/app:probe/c", 1, "late-alarms", 500, text)
    failure = ChaosFailure(3, [record], "boom")
    assert f"    {text}" in str(failure), "the library's report, from the record's step"
    again = pickle.loads(pickle.dumps(failure))
    assert (again.seed, again.schedule, again.message, str(again)) == (3, [record], "boom", str(failure))


def test_history_and_a_restore_to_a_time_undone_by_another(wasmkeep_host_factory, wasmkeep_classes):
    host = wasmkeep_host_factory(wasmkeep_classes, history=True)
    probe = host.actor("probe", "back")
    bumps = lambda: sum(1 for r in probe.rows("events") if r["what"] == "bump")  # noqa: E731
    assert probe.get("/bump").text() == "1"
    host.advance(timedelta(seconds=1))
    one = host.now()
    host.advance(timedelta(seconds=1))
    assert probe.get("/bump").text() == "2"

    history = probe.history()
    assert len(history) >= 2 and all(isinstance(p, HistoryPosition) for p in history), history
    assert [p.bookmark for p in history] == sorted(p.bookmark for p in history), "bookmarks sort as positions do"
    assert history[-1].head and not any(p.head for p in history[:-1])
    assert any(p.at <= one for p in history) and any(p.at > one for p in history)

    restored = probe.restore(time=one)
    assert isinstance(restored, Restored) and restored.at > restored.undo
    assert bumps() == 1, "the state at the time of the first bump"
    assert probe.history()[-1].bookmark == restored.at, "the restore is the new head"
    undone = probe.restore(bookmark=restored.undo)
    assert bumps() == 2, "the undo brings the second bump back"
    assert undone.undo == restored.at
    assert probe.restore(time=host.now_ms()).from_ == undone.at, "a time in ms restores too"

    with pytest.raises(ValueError) as bad:
        probe.restore(bookmark="yesterday")
    assert bad.value.kind == "bad-argument"
    with pytest.raises(ValueError) as early:
        probe.restore(time=1)
    assert early.value.kind == "bad-argument", "a time before the first state"
    with pytest.raises(HostError) as never:
        host.actor("probe", "never").restore(time=one)
    assert never.value.kind == "no-such-actor"
    assert host.actor("probe", "never").history() == []
    with pytest.raises(ValueError) as neither:
        probe.restore()
    assert neither.value.kind == "bad-argument"


def test_a_host_without_history_says_so_by_kind(probe):
    probe.get("/bump")
    with pytest.raises(ValueError) as e:
        probe.history()
    assert e.value.kind == "bad-argument"
    with pytest.raises(ValueError) as e:
        probe.restore(time=probe._host.now())
    assert e.value.kind == "bad-argument"
