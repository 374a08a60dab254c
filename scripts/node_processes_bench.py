"""Requests/s and durable-delete latency of two node processes (ADR 028),
and what they ask of the bucket: requests by purpose per idle node-hour and
per acknowledged write (issue 57; `/metrics`' wasmkeep_bucket_requests_total).

Called by scripts/node-processes-bench.sh with the two nodes' addresses
(host:port): n1 takes the actors it is sent first, n2 forwards to it.
"""

import http.client
import sys
import threading
import time


def posts(address, actor, count):
    """Sequential POSTs to one counter on one connection: requests/s."""
    host, port = address.split(":")
    conn = http.client.HTTPConnection(host, int(port))
    start = time.time()
    for _ in range(count):
        conn.request("POST", f"/counter/{actor}/")
        answer = conn.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
    return count / (time.time() - start)


def parallel_posts(address, clients, count):
    """`clients` connections, each POSTing to its own counter: requests/s in all."""
    threads = [threading.Thread(target=posts, args=(address, f"par{i}", count)) for i in range(clients)]
    start = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return clients * count / (time.time() - start)


def delete_latencies(address, count):
    """A counter made, then deleted (the example's DELETE is a durable delete): ms each."""
    host, port = address.split(":")
    conn = http.client.HTTPConnection(host, int(port))
    out = []
    for i in range(count):
        conn.request("POST", f"/counter/del{i}/")
        answer = conn.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
        start = time.time()
        conn.request("DELETE", f"/counter/del{i}/")
        answer = conn.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
        out.append((time.time() - start) * 1000)
    return sorted(out)


def bucket_requests(address):
    """The node's bucket requests so far, from /metrics: {(verb, purpose): n}."""
    host, port = address.split(":")
    conn = http.client.HTTPConnection(host, int(port))
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("wasmkeep_bucket_requests_total{"):
            labels, n = line.rsplit(" ", 1)
            verb = labels.split('verb="')[1].split('"')[0]
            purpose = labels.split('purpose="')[1].split('"')[0]
            out[(verb, purpose)] = int(n)
    return out


def delta(after, before):
    return {k: n - before.get(k, 0) for k, n in after.items() if n - before.get(k, 0)}


def show(title, counts, scale, unit):
    """Counts scaled to `unit`, PUTs, GETs, LISTs and DELETEs each by purpose."""
    print(title)
    for verb in ("put", "get", "list", "delete"):
        rows = sorted((p, n) for (v, p), n in counts.items() if v == verb)
        total = sum(n for _, n in rows) * scale
        parts = ", ".join(f"{p} {n * scale:.0f}" for p, n in rows)
        print(f"  {verb.upper():6} {total:8.1f} {unit}" + (f" ({parts})" if parts else ""))


def what_a_cluster_writes(n1, n2, idle_s):
    """Bucket requests by purpose (issue 57): both nodes idle for `idle_s`,
    scaled to an hour (the one that holds the control lease writes it too);
    then acknowledged writes on n1, per write."""
    before = {n: bucket_requests(n) for n in (n1, n2)}
    time.sleep(idle_s)
    idles = {n: delta(bucket_requests(n), before[n]) for n in (n1, n2)}
    for name, n in (("n1", n1), ("n2", n2)):
        role = "holds the control lease" if idles[n].get(("put", "control")) else "does not hold the control lease"
        show(f"bucket requests of an idle node, {name}, which {role} ({idle_s:g} s, per node-hour):",
             idles[n], 3600 / idle_s, "/ node-hour")
    idle = idles[n1]
    posts(n1, "writes", 5)  # n1 takes the actor
    writes = 200
    before = bucket_requests(n1)
    start = time.time()
    posts(n1, "writes", writes)
    took = time.time() - start
    used = delta(bucket_requests(n1), before)
    # What n1 would have made idle meanwhile is not the writes'.
    idle_share = {k: n * took / idle_s for k, n in idle.items()}
    per_write = {k: max(0.0, n - idle_share.get(k, 0)) / writes for k, n in used.items()}
    show(f"bucket requests per acknowledged write ({writes} POSTs to one counter on its holder, the idle rate taken off):",
         per_write, 1, "/ write")


def takeover(n2):
    """After the holder n1 was killed (`kill -9`, by the caller): seconds
    until a POST to the actor it held, sent to n2, answers 200 (issue 57:
    within 15 s)."""
    host, port = n2.split(":")
    start = time.time()
    while time.time() - start < 60:
        try:
            conn = http.client.HTTPConnection(host, int(port), timeout=5)
            conn.request("POST", "/counter/one/")
            answer = conn.getresponse()
            answer.read()
            if answer.status == 200:
                print(f"a killed holder's actor answered by the other node after: {time.time() - start:.1f} s")
                return
        except OSError:
            pass
        time.sleep(0.1)
    print("a killed holder's actor was not taken over within 60 s")
    sys.exit(1)


def main():
    if sys.argv[1] == "takeover":
        takeover(sys.argv[2])
        return
    n1, n2 = sys.argv[1], sys.argv[2]
    idle_s = float(sys.argv[3]) if len(sys.argv) > 3 else 20
    what_a_cluster_writes(n1, n2, idle_s)
    posts(n1, "one", 5)  # n1 takes the actor
    print(f"one actor, sequential POSTs to its holder:        {posts(n1, 'one', 200):6.0f} req/s")
    print(f"one actor, sequential POSTs forwarded by the other: {posts(n2, 'one', 200):6.0f} req/s")
    print(f"8 actors, 8 clients x 50 POSTs, to one node:        {parallel_posts(n1, 8, 50):6.0f} req/s")
    ms = delete_latencies(n1, 20)
    print(f"durable delete on the holder (20 actors):  median {ms[len(ms) // 2]:.0f} ms, max {ms[-1]:.0f} ms")


if __name__ == "__main__":
    main()
