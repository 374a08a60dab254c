// The build command's spinner (build/spinner.js), on a fake stream: silent
// off a terminal (pipes and CI logs keep exactly the plain lines), frames with
// the elapsed time on one, and its line cleared when it stops.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startSpinner } from "../build/spinner.js";

/** A stand-in for process.stderr that records what is written. */
function fakeStream(columns = 80) {
  const writes = [];
  return { writes, columns, write: (s) => writes.push(s) };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("off a terminal the spinner writes nothing", async () => {
  const stream = fakeStream();
  const spinner = startSpinner("wasmkeep-build: componentizing", { stream, tty: false, intervalMs: 5 });
  await sleep(40);
  spinner.stop();
  assert.equal(spinner.active, false);
  assert.deepEqual(stream.writes, []);
});

test("on a terminal it rewrites one line with the elapsed time and clears it at the end", async () => {
  const stream = fakeStream();
  const spinner = startSpinner("wasmkeep-build: componentizing", { stream, tty: true, intervalMs: 5 });
  await sleep(100);
  spinner.stop();
  spinner.stop(); // a second stop (fail() after endStep()) writes nothing more
  const frames = stream.writes.slice(0, -1);
  assert.ok(frames.length >= 3, `frames: ${JSON.stringify(stream.writes)}`);
  for (const f of frames) assert.match(f, /^\rwasmkeep-build: componentizing \S \d+\.\d s$/);
  assert.equal(new Set(frames.map((f) => f.split(" ")[2])).size > 1, true, "the frame turns");
  assert.equal(stream.writes.at(-1), "\r\x1b[K");
  assert.equal(stream.writes.filter((w) => w.includes("\n")).length, 0, "never a newline");
});

test("a line wider than the terminal is cut so that it never wraps", () => {
  const stream = fakeStream(30);
  const spinner = startSpinner(`wasmkeep-build: ${"x".repeat(100)}`, { stream, tty: true, intervalMs: 1000 });
  spinner.stop();
  assert.ok(stream.writes[0].length - 1 < 30, JSON.stringify(stream.writes[0]));
  assert.match(stream.writes[0], /… \S 0\.0 s$/);
});

test("stopping removes the spinner's signal listeners", () => {
  const before = process.listenerCount("SIGINT");
  const spinner = startSpinner("x", { stream: fakeStream(), tty: true, intervalMs: 1000 });
  assert.equal(process.listenerCount("SIGINT"), before + 1);
  spinner.stop();
  assert.equal(process.listenerCount("SIGINT"), before);
});
