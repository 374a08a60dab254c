// Runs the built chat room (npm run build) in the wasmkeep host, in-process.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestHost } from "@wasmkeep/actor/testing";

const component = process.env.CHAT_WASM ?? fileURLToPath(new URL("../chat.wasm", import.meta.url));

// A new host per test: its own temporary storage and virtual clock.
let host;
const start = () => (host = createTestHost({ classes: { chat: component } }));
afterEach(() => host?.close());

/** What a client received since the last call, parsed (the close as it is). */
const got = (socket) => socket.received().map((m) => (typeof m === "string" ? JSON.parse(m) : m));

/** Joins `room` as `name`; returns the socket with what it received on joining drained. */
function join(room, name) {
  const s = room.openSocket(`/?name=${encodeURIComponent(name)}`);
  room.settle();
  return s;
}

test("a message is stored and broadcast to every open socket", () => {
  start();
  const room = host.actor("chat", "lobby");
  const alice = join(room, "alice");
  assert.deepEqual(got(alice), [{ type: "history", messages: [] }]);
  const bob = join(room, "bob");
  assert.deepEqual(got(bob), [{ type: "history", messages: [] }]);
  assert.deepEqual(got(alice), [{ type: "join", name: "bob" }]);

  alice.send("hello, bob");
  room.settle();
  const expected = { type: "message", id: 1, at: host.now(), name: "alice", text: "hello, bob" };
  assert.deepEqual(got(alice), [expected], "the sender gets its own message back");
  assert.deepEqual(got(bob), [expected]);
  assert.deepEqual(
    room.rows("messages").map((m) => [m.name, m.text]),
    [["alice", "hello, bob"]],
  );
  assert.deepEqual(room.get("/").json(), { members: ["alice", "bob"], messages: 1 });
  assert.equal(host.actor("chat", "other").get("/").json().messages, 0, "each room is its own actor");
});

test("a joining client gets the history; leaving is announced", () => {
  start();
  const room = host.actor("chat", "r");
  const alice = join(room, "alice");
  alice.send("one");
  room.settle(); // socket messages are queued: run it before the clock moves
  host.advance(1_000);
  alice.send("two");
  room.settle();
  got(alice);

  const carol = join(room, "carol");
  const [history] = got(carol);
  assert.equal(history.type, "history");
  assert.deepEqual(history.messages.map((m) => m.text), ["one", "two"]);
  assert.equal(history.messages[1].at - history.messages[0].at, 1_000, "times are the host's (virtual) clock");

  carol.close(1000, "bye");
  room.settle();
  assert.deepEqual(got(alice), [{ type: "join", name: "carol" }, { type: "leave", name: "carol" }]);
  assert.deepEqual(room.rows("members").map((m) => m.name), ["alice"]);
  assert.deepEqual(room.get("/history?limit=1").json().map((m) => m.text), ["two"]);
});

test("bad messages answer an error to the sender only", () => {
  start();
  const room = host.actor("chat", "e");
  const alice = join(room, "alice");
  const bob = join(room, "bob");
  got(alice);
  got(bob);
  alice.send("   ");
  alice.send(new Uint8Array([1, 2]));
  alice.send("x".repeat(2001));
  room.settle();
  assert.deepEqual(got(alice).map((m) => m.type), ["error", "error", "error"]);
  assert.deepEqual(got(bob), []);
  assert.deepEqual(room.rows("messages"), []);
});

test("HTTP posts reach the sockets; the history keeps the latest 100", () => {
  start();
  const room = host.actor("chat", "h");
  const alice = join(room, "alice");
  got(alice);
  const r = room.fetch("/messages?name=bot", { method: "POST", body: "deploy done" });
  assert.equal(r.status, 201);
  assert.equal(r.json().name, "bot");
  assert.deepEqual(got(alice).map((m) => [m.type, m.name, m.text]), [["message", "bot", "deploy done"]]);
  assert.equal(room.fetch("/messages", { method: "POST", body: "" }).status, 400);

  for (let i = 0; i < 110; i++) room.fetch("/messages", { method: "POST", body: `m${i}` });
  const kept = room.rows("messages");
  assert.equal(kept.length, 100);
  assert.equal(kept.at(-1).text, "m109");
  assert.equal(room.get("/nope").status, 404);
});

test("deleting the room closes its sockets and forgets the history", () => {
  start();
  const room = host.actor("chat", "d");
  const alice = join(room, "alice");
  alice.send("soon gone");
  room.settle();
  got(alice);
  assert.equal(room.delete("/").text(), "deleted");
  room.settle();
  assert.deepEqual(got(alice), [{ close: { code: 1000, reason: "actor deleted" } }]);
  assert.equal(room.exists(), false);
  assert.deepEqual(room.get("/").json(), { members: [], messages: 0 }, "a new, empty room");
});
