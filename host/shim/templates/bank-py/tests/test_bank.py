"""The bank's rules, one at a time: idempotent operations, interest by alarm
(after a take-over too), and a close by durable delete."""

import json
from datetime import timedelta


def statement(a, node=None):
    return json.loads(a.get("/", node=node).text())


def test_an_operation_id_moves_money_once_and_a_retry_answers_the_same(wasmkeep_host):
    a = wasmkeep_host.actor("bank", "acct")
    assert a.post("/deposit?op=d1&amount=100").text() == "100"
    assert a.post("/deposit?op=d1&amount=100").text() == "100", "a retry"
    assert a.post("/withdraw?op=w1&amount=500").status == 409
    assert a.post("/withdraw?op=w2&amount=30").text() == "70"
    assert a.post("/withdraw?op=w1&amount=500").status == 409, "a refusal is kept for its id too"
    assert statement(a) == {"balance": 70, "interest": 0}
    assert a.post("/deposit?amount=5").status == 400, "no op id"


def test_interest_is_paid_daily_and_after_a_take_over_by_the_new_holder(wasmkeep_host_factory, wasmkeep_classes):
    host = wasmkeep_host_factory(wasmkeep_classes, nodes=2)
    a = host.actor("bank", "acct")
    assert a.post("/deposit?op=d1&amount=1000", node=1).text() == "1000"
    host.cut_off(1)
    assert statement(a, node=2) == {"balance": 1000, "interest": 0}, "node 2 takes the account over"
    host.advance(timedelta(days=1))
    assert host.run_due_alarms() == 1, "the alarm fires on node 2, the new holder"
    assert statement(a, node=2) == {"balance": 1010, "interest": 10}
    host.advance(timedelta(days=1))
    assert a.run_alarm(node=2), "and again the next day, through node 2"
    assert statement(a, node=2) == {"balance": 1020, "interest": 20}


def test_advance_with_run_due_pays_each_days_interest(wasmkeep_host):
    a = wasmkeep_host.actor("bank", "acct")
    a.post("/deposit?op=d1&amount=1000")
    before = wasmkeep_host.now()
    by = timedelta(days=3, hours=1)
    assert wasmkeep_host.advance(by, run_due=True) == before + by, "the new time"
    assert statement(a) == {"balance": 1030, "interest": 30}, "one alarm a day, each at its time"
    # The plain advance runs nothing; run_due_alarms then runs the one alarm due.
    wasmkeep_host.advance(timedelta(days=2))
    assert wasmkeep_host.run_due_alarms() == 1
    assert statement(a) == {"balance": 1040, "interest": 40}


def test_the_balance_and_the_interest_survive_a_restart_of_the_host(wasmkeep_host):
    a = wasmkeep_host.actor("bank", "acct")
    a.post("/deposit?op=d1&amount=500")
    wasmkeep_host.restart_host()
    wasmkeep_host.advance(timedelta(days=1))
    assert wasmkeep_host.run_due_alarms() == 1, "the alarm is still indexed"
    assert statement(a) == {"balance": 505, "interest": 5}


def test_a_closed_account_starts_again_empty(wasmkeep_host):
    a = wasmkeep_host.actor("bank", "acct")
    a.post("/deposit?op=d1&amount=10")
    assert a.delete().text() == "closed"
    assert statement(a) == {"balance": 0, "interest": 0}
