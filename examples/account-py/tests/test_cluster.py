"""The account in a local cluster of two nodes: a node that is cut off
hands the account over, and the other node serves what was kept."""


def test_the_other_node_serves_the_kept_account_after_a_cut_off(wasmkeep_host_factory, wasmkeep_classes):
    host = wasmkeep_host_factory(wasmkeep_classes, nodes=2)
    a = host.actor("account", "u-2")
    assert a.put("/", "pro", node=1).text() == "open, plan pro"
    assert a.post("/webhook", "paid", node=2).text() == "recorded", "node 2 forwards to the holder"
    host.cut_off(1)
    assert a.get(node=2).json() == {"plan": "pro", "events": 1}, "node 2 took over with the kept state"
    assert a.delete(node=2).json() == {"closed": True, "subscription": "cancelled"}
    assert a.deletion_status().how == "self_durable"
