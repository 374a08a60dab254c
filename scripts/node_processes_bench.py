"""Requests/s and durable-delete latency of two node processes (ADR 028).

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


def main():
    n1, n2 = sys.argv[1], sys.argv[2]
    posts(n1, "one", 5)  # n1 takes the actor
    print(f"one actor, sequential POSTs to its holder:        {posts(n1, 'one', 200):6.0f} req/s")
    print(f"one actor, sequential POSTs forwarded by the other: {posts(n2, 'one', 200):6.0f} req/s")
    print(f"8 actors, 8 clients x 50 POSTs, to one node:        {parallel_posts(n1, 8, 50):6.0f} req/s")
    ms = delete_latencies(n1, 20)
    print(f"durable delete on the holder (20 actors):  median {ms[len(ms) // 2]:.0f} ms, max {ms[-1]:.0f} ms")


if __name__ == "__main__":
    main()
