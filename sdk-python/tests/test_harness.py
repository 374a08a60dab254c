"""The SDK's API inside a component, driven through wasmkeep_actor.testing
(the pyo3 harness over the host library) and the pytest plugin's fixtures."""

from datetime import datetime, timedelta, timezone

import pytest

from wasmkeep_actor.testing import CallRejected, Closed, HostError, TestHost


@pytest.fixture
def probe(wasmkeep_host):
    return wasmkeep_host.actor("probe", "p")


def test_values_cross_with_their_python_types(probe):
    r = probe.get("/values").json()
    assert r["values"] == ["None", "7", "1.5", "'x'", "b'\\x00\\xff'", "1"]
    assert r["types"] == ["NoneType", "int", "float", "str", "bytes", "int"]


def test_rows_read_by_position_name_attribute_and_as_dicts(probe):
    r = probe.get("/rows").json()
    assert r["columns"] == ["k", "v"]
    assert (r["by_key"], r["by_attr"], r["unpacked"]) == ("a", 1, ["a", 1])
    assert r["dict"] == [{"k": "a", "v": 1}, {"k": "b", "v": 2}]
    assert r["mapping"] == {"k": "b", "v": 2}
    assert r["count"] == 2
    assert r["empty_columns"] == ["k"]
    # query_one and query_value read the bindings' answer directly (ADR 057): the same values.
    assert r["one"] == {"k": "b", "v": 2}
    assert r["one_by_name"] == 1
    assert r["one_none"] is None
    assert (r["value_text"], r["value_none"], r["value_null"]) == ("a", None, None)


def test_sql_errors_are_subclasses_with_the_case_visible(probe):
    r = probe.get("/errors").json()
    kind, code, is_constraint, message = r["constraint"]
    assert (kind, code, is_constraint) == ("sqlite", 19, True)
    assert "UNIQUE" in message
    assert r["begin_as_sql"][0] == "not-allowed"
    assert r["syntax"] == [1]
    assert "cannot bind a object" in r["bad_param"]
    assert "64-bit" in r["too_big"]


def test_transaction_commits_or_rolls_back_with_the_block(probe):
    assert probe.get("/transaction").json() == {"keys": ["kept"]}


def test_durable_delete_refuses_later_storage_and_forgets_the_alarm(wasmkeep_host, probe):
    probe.get("/alarm")
    r = probe.get("/delete-durable").json()
    assert r == {"alarm_after": "None", "after": "deleted in this event"}
    assert not probe.exists()
    assert wasmkeep_host.advance(timedelta(hours=1))
    assert wasmkeep_host.run_due_alarms() == 0
    # The next event meets a new actor that knows how its predecessor ended.
    ctx = probe.get("/context").json()
    assert ctx["previous_deletion"]["cause"] == "delete-self-durable"


def test_durable_delete_inside_a_transaction_is_refused(probe):
    assert probe.get("/delete-durable-in-transaction").json()["refused"].startswith("open transaction")
    assert probe.exists()


def test_failed_removal_raises_internal_and_the_end_of_the_event_removes_the_files(wasmkeep_host, probe):
    probe.get("/rows")
    wasmkeep_host.faults.fail_removal()
    r = probe.get("/delete-durable")
    assert r.status == 500
    assert probe.rows("kv") == []


def test_delete_self_takes_effect_at_the_end_of_the_event(probe):
    probe.get("/rows")
    assert probe.delete("/delete").text() == "bye"
    probe.settle()  # the answer went out before the end of the event removed the files
    assert not probe.exists()
    assert probe.get("/context").json()["previous_deletion"]["cause"] == "delete-self"


def test_an_early_answer_goes_out_and_the_event_goes_on(probe):
    r = probe.get("/early")
    assert (r.status, r.text()) == (202, "early")
    assert {"what": "after-answer", "detail": ""} in probe.rows("events")


def test_alarms_take_datetimes_and_run_on_the_virtual_clock(wasmkeep_host, probe):
    r = probe.get("/alarm").json()
    at, now = datetime.fromisoformat(r["at"]), datetime.fromisoformat(r["now"])
    assert at - now == timedelta(minutes=5)
    assert at.tzinfo == timezone.utc
    assert probe.alarm == at
    assert not probe.run_alarm(), "not due yet"
    wasmkeep_host.advance(timedelta(minutes=5))
    assert probe.run_alarm()
    assert [e["what"] for e in probe.rows("events")] == ["alarm"]
    assert probe.alarm is None


def test_clear_alarm(wasmkeep_host, probe):
    probe.get("/alarm")
    assert probe.get("/clear-alarm").json() == {"alarm": "None"}
    wasmkeep_host.advance(timedelta(hours=1))
    assert wasmkeep_host.run_due_alarms() == 0


def test_context_says_who_and_when(wasmkeep_host, probe):
    r = probe.get("/context").json()
    assert (r["cls"], r["name"], r["app"]) == ("probe", "p", "test/app")
    assert r["now_ms"] == wasmkeep_host.now_ms()
    assert r["previous_deletion"] is None


def test_log_lines_reach_the_host(wasmkeep_host, probe):
    probe.get("/log")
    lines = [(line["level"], line["message"]) for line in wasmkeep_host.logs()]
    assert ("info", "hello 42") in lines
    assert ("warn", "careful") in lines


def test_the_logging_module_writes_to_the_host_log(wasmkeep_host, probe):
    probe.get("/logging")
    lines = [(line["level"], line["message"]) for line in wasmkeep_host.logs()]
    assert ("warn", "through logging: 7") in lines
    assert ("debug", "quiet detail") in lines


def test_calls_between_actors_and_a_rejection(probe):
    r = probe.get("/call?peer=q").json()
    assert r["answer"] == {"caller": "probe/p", "payload": {"from": "p"}}
    assert r["rejected"] == "rejected on purpose"


def test_host_calls(wasmkeep_host, probe):
    assert probe.call_json({"x": 1}) == {"caller": "None", "payload": {"x": 1}}
    with pytest.raises(CallRejected) as rejected:
        probe.call("reject me")
    # The kind, and the message the callee's on_call raised (its words, passed on; not the host's).
    assert (rejected.value.kind, rejected.value.message) == ("rejected", "rejected on purpose")
    with pytest.raises(HostError) as unknown:
        wasmkeep_host.actor("nope", "x").call("hi")
    assert unknown.value.kind == "no-such-class"


def test_an_exception_fails_the_event_with_500_and_is_logged(wasmkeep_host, probe):
    probe.get("/rows")
    r = probe.get("/raise")
    assert r.status == 500
    assert any("boom from on_request" in line["message"] for line in wasmkeep_host.logs())


def _failure(actor, path="/"):
    r = actor.get(path)
    assert r.status == 500, r.text()
    text = r.text()
    assert text.count("Traceback (most recent call last):") == 1, text
    assert "_entry.py" not in text, f"the SDK's own frames are left out:\n{text}"
    assert text.splitlines()[-1].startswith("the event trapped ("), text
    return text.splitlines()


def test_a_failed_event_answers_the_exception_first_then_its_traceback_once(probe):
    lines = _failure(probe, "/raise")
    assert lines[0] == "RuntimeError: boom from on_request"
    assert lines[1] == "Traceback (most recent call last):"
    assert lines[2].endswith(", in on_request") and "probe.py" in lines[2]
    assert lines[3].strip() == 'raise RuntimeError("boom from on_request")', "the source line is there"
    assert lines[4] == "RuntimeError: boom from on_request"
    # The SDK's report (context.report-failure) is the whole of the guest's
    # part: the line the engine printed as it trapped is not read any more.
    assert lines[5].startswith("the event trapped ("), lines
    assert len(lines) == 6, lines


def test_an_sdk_exception_is_named_first(probe):
    lines = _failure(probe, "/raise-sql")
    assert lines[0].startswith('SqliteError: near "SELEC": syntax error'), lines


def test_on_init_failing_answers_its_exception_first(wasmkeep_host):
    lines = _failure(wasmkeep_host.actor("probe", "init-fails"))
    assert lines[0].endswith("LookupError: on_init boom"), lines  # after the host's words about on-init
    assert lines[1] == "Traceback (most recent call last):"


def test_failures_without_an_answer_reach_the_host_log_exception_first(wasmkeep_host):
    a = wasmkeep_host.actor("probe", "quiet-failures")
    assert a.get("/raise-in-alarm").text() == "set"
    a.run_alarm()
    s = a.open_socket("/room")
    s.send("raise")
    a.settle()
    with pytest.raises(CallRejected) as rejected:
        a.call("reject me")
    assert rejected.value.kind == "rejected"
    messages = [line["message"] for line in wasmkeep_host.logs() if line["level"] == "error"]
    for head in (
        "on_alarm raised (the event failed): ArithmeticError: on_alarm boom\nTraceback",
        "on_socket_message raised (the event failed): KeyError: 'on_socket_message boom'\nTraceback",
        "on_call raised (the caller gets CallRejected): ValueError: rejected on purpose\nTraceback",
    ):
        assert any(m.startswith(head) for m in messages), (head, messages)


def test_requests_and_responses(probe):
    r = probe.fetch("/echo", method="PUT", headers={"X-Test": "yes"}, body="hi")
    assert (r.status, r.header("x-method"), r.header("X-HEADER"), r.text()) == (201, "PUT", "yes", "hi")
    assert probe.post("/json?a=1&a=2&b=", json={"k": [1]}).json() == {"got": {"k": [1]}, "query": {"a": "1", "b": ""}}
    b = probe.get("/bytes")
    assert (b.body, b.header("content-type")) == (b"\x01\x02", "application/octet-stream")
    assert probe.get("/nowhere").status == 404


def test_sockets_open_echo_broadcast_and_close(probe):
    a = probe.open_socket("/room")
    b = probe.open_socket("/room")
    a.send("hi")
    a.send(b"\x01\x02")
    assert a.received() == ["echo hi", b"\x02\x01"]
    assert probe.post("/broadcast", "news").json() == {"reached": 2}
    assert b.received() == ["news"]
    b.close(1000, "leaving")
    probe.settle()
    assert probe.post("/close-all").text() == "closed"
    assert a.received()[-1] == Closed(4000, "bye")
    probe.settle()
    details = [(e["what"], e["detail"]) for e in probe.rows("events")]
    assert details == [("open", "/room"), ("open", "/room"), ("close", "1000 leaving"), ("close", "4000 bye")]


def test_each_test_gets_its_own_storage(wasmkeep_host, probe):
    assert not probe.exists(), "nothing left over from the other tests"
    probe.get("/rows")
    assert probe.exists()


def test_hibernation_keeps_the_data_and_status_tells(wasmkeep_host, probe):
    probe.get("/rows")
    assert probe.status() == "resident"
    wasmkeep_host.hibernate_all()
    assert probe.status() == "hibernated"
    assert len(probe.rows("kv")) == 2
    assert "wasmkeep" in wasmkeep_host.metrics()


def test_a_second_host_from_the_factory_is_isolated(wasmkeep_host_factory, wasmkeep_classes, probe):
    probe.get("/rows")
    other = wasmkeep_host_factory(wasmkeep_classes)
    assert other.data_dir != probe._host.data_dir
    assert not other.actor("probe", "p").exists()


def test_a_missing_component_says_what_to_do():
    with pytest.raises(FileNotFoundError, match="build it first"):
        TestHost({"x": "no-such.wasm"}).close()
