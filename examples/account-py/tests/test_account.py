"""The account example: the subscription is cancelled only after a durable
delete, a failed delete cancels nothing, and late webhooks recreate nothing."""

import pytest

from wasmkeep_actor.testing import HostError

def cancellations(host):
    return host.actor("billing", "provider").rows("cancellations")


def test_open_record_and_close_cancels_after_the_durable_delete(wasmkeep_host):
    a = wasmkeep_host.actor("account", "u-1842")
    assert a.put("/", "pro").text() == "open, plan pro"
    assert a.post("/webhook", "paid").text() == "recorded"
    assert a.get().json() == {"plan": "pro", "events": 1}

    r = a.delete()
    assert r.json() == {"closed": True, "subscription": "cancelled"}
    assert not a.exists()
    assert [c["account"] for c in cancellations(wasmkeep_host)] == ["u-1842"]


def test_a_late_webhook_is_refused_and_recreates_nothing(wasmkeep_host):
    a = wasmkeep_host.actor("account", "u-7")
    a.put("/", "basic")
    a.delete()
    r = a.post("/webhook", "refund")
    assert r.status == 410
    assert "delete-self-durable" in r.text()
    assert not a.exists(), "the webhook's empty database was dropped again"


def test_a_failed_delete_cancels_nothing_and_a_retry_finishes_the_job(wasmkeep_host):
    a = wasmkeep_host.actor("account", "u-9")
    a.put("/", "pro")
    wasmkeep_host.faults.fail_removal(1)
    r = a.delete()
    assert r.status == 503
    assert "retry" in r.text()
    assert cancellations(wasmkeep_host) == [], "not known to be deleted: nothing cancelled"

    r = a.delete()
    assert r.json() == {"closed": True, "subscription": "cancelled"}
    assert [c["account"] for c in cancellations(wasmkeep_host)] == ["u-9"]
    assert a.delete().json()["subscription"] == "already cancelled"


def test_an_unknown_account_is_404_and_billing_is_not_reachable_over_http(wasmkeep_host):
    assert wasmkeep_host.actor("account", "nobody").get().status == 404
    with pytest.raises(HostError) as refused:
        wasmkeep_host.actor("billing", "provider").get()
    assert refused.value.kind == "internal", "billing takes calls from the app's actors only"
