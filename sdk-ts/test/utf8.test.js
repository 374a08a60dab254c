// The SDK's own UTF-8 (src/utf8.ts, for engines without TextEncoder) against
// Node's: the same bytes for every string, lone surrogates included, and the
// same text for every valid encoding; invalid bytes as the SDK has always
// decoded them (one U+FFFD per rejected sequence).
import assert from "node:assert/strict";
import { test } from "node:test";
// utf8.js directly: index.js imports the host's interfaces, which exist only in a component.
import { decodeUtf8 as decodeText, encodeUtf8 as encodeText } from "../dist/utf8.js";

/** A seeded generator (mulberry32), so that a failure can be replayed. */
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Code units from each range where UTF-8's length changes, surrogates (paired and lone) among them. */
function randomString(next) {
  const ranges = [[0, 0x7f], [0x80, 0x7ff], [0x800, 0xd7ff], [0xd800, 0xdbff], [0xdc00, 0xdfff], [0xe000, 0xffff]];
  let s = "";
  const n = Math.floor(next() * 40);
  for (let i = 0; i < n; i++) {
    const [lo, hi] = ranges[Math.floor(next() * ranges.length)];
    s += String.fromCharCode(lo + Math.floor(next() * (hi - lo + 1)));
  }
  return s;
}

test("encodeText gives TextEncoder's bytes, for ASCII, every UTF-8 length and lone surrogates", () => {
  const enc = new TextEncoder();
  for (const s of ["", "12", "hello", "é", "aé", "€", "a😀b", "\ud800", "a\udc00", "x\ud83d", "\ud83d\ude00\ud83d"]) {
    assert.deepEqual(encodeText(s), enc.encode(s), JSON.stringify(s));
  }
  const next = rng(1);
  for (let i = 0; i < 5000; i++) {
    const s = randomString(next);
    assert.deepEqual(encodeText(s), enc.encode(s), JSON.stringify(s));
  }
});

test("decodeText reads back every valid encoding, long ASCII runs and all", () => {
  const enc = new TextEncoder();
  const next = rng(2);
  for (let i = 0; i < 5000; i++) {
    const s = randomString(next).toWellFormed();
    assert.equal(decodeText(enc.encode(s)), s);
  }
  const long = "a".repeat(10_000) + "é" + "b".repeat(5_000);
  assert.equal(decodeText(enc.encode(long)), long);
});

/** The SDK's decoder before its ASCII runs (0.2.0), as the reference for invalid input. */
function decodeBefore(b) {
  const cont = (i) => i < b.length && (b[i] & 0xc0) === 0x80;
  let s = "";
  for (let i = 0; i < b.length; ) {
    const x = b[i];
    let c = 0xfffd;
    let n = 1;
    if (x < 0x80) c = x;
    else if (x >= 0xc2 && x < 0xe0 && cont(i + 1)) {
      c = ((x & 31) << 6) | (b[i + 1] & 63);
      n = 2;
    } else if (x >= 0xe0 && x < 0xf0 && cont(i + 1) && cont(i + 2)) {
      const v = ((x & 15) << 12) | ((b[i + 1] & 63) << 6) | (b[i + 2] & 63);
      if (v >= 0x800 && (v < 0xd800 || v > 0xdfff)) c = v;
      n = 3;
    } else if (x >= 0xf0 && x < 0xf5 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
      const v = ((x & 7) << 18) | ((b[i + 1] & 63) << 12) | ((b[i + 2] & 63) << 6) | (b[i + 3] & 63);
      if (v >= 0x10000 && v <= 0x10ffff) c = v;
      n = 4;
    }
    s += String.fromCodePoint(c);
    i += n;
  }
  return s;
}

test("decodeText reads an array of numbers too, as it always has", () => {
  assert.equal(decodeText([104, 105, 0xc3, 0xa9]), "hié");
});

test("decodeText replaces invalid bytes as it always has", () => {
  const next = rng(3);
  for (let i = 0; i < 5000; i++) {
    const b = new Uint8Array(Math.floor(next() * 30));
    // Mostly ASCII, with lead and continuation bytes mixed in.
    for (let j = 0; j < b.length; j++) b[j] = next() < 0.5 ? Math.floor(next() * 0x80) : 0x80 + Math.floor(next() * 0x80);
    assert.equal(decodeText(b), decodeBefore(b), `[${b}]`);
  }
});
