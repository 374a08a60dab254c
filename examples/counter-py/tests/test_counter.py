"""Runs the counter in the wasmkeep host, in-process (wasmkeep_host: a fresh
host per test, with its own storage and virtual clock)."""


def test_counts_reads_and_deletes(wasmkeep_host):
    c = wasmkeep_host.actor("counter", "visits")
    assert c.get().text() == "0"
    assert c.post().text() == "1"
    assert c.post().text() == "2"
    assert c.rows("counter") == [{"id": 1, "n": 2}]
    assert wasmkeep_host.actor("counter", "other").get().text() == "0", "each counter is its own actor"

    r = c.delete()
    assert (r.status, r.text()) == (200, "deleted")
    assert not c.exists()
    assert c.get().text() == "0", "the next request meets a new counter"


def test_a_failed_durable_delete_answers_503_not_acknowledged_and_the_counter_starts_again(wasmkeep_host):
    c = wasmkeep_host.actor("counter", "f")
    c.post()
    wasmkeep_host.faults.fail_removal(1)
    r = c.delete()
    # Internal: not known to be durable, and safe to send again (Response.not_kept).
    assert r.status == 503, r.text()
    assert r.header("wasmkeep-failure") == "not-acknowledged", r.text()
    assert r.header("retry-after") == "1", r.text()
    assert c.get().text() == "0", "the end of the event removed the files: a new counter"


def test_other_methods_are_refused(wasmkeep_host):
    assert wasmkeep_host.actor("counter", "m").fetch("/", method="PUT").status == 405
