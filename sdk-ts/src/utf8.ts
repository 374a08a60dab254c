// UTF-8 without TextEncoder/TextDecoder, which not every JS engine a
// component can be built on provides. Both run on every answer and request
// body, in an interpreter (QuickJS): ASCII, the common case, is written and
// read in place, one byte per code unit, with no intermediate array.

/** `s` as UTF-8 bytes, in any JS engine (lone surrogates become U+FFFD). */
export function encodeUtf8(s: string): Uint8Array {
  const n = s.length;
  const ascii = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return encodeFrom(s, i, ascii);
    ascii[i] = c;
  }
  return ascii;
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** The rest of {@link encodeUtf8} from `start`, the first code unit beyond ASCII; `prefix` holds the bytes before it. */
function encodeFrom(s: string, start: number, prefix: Uint8Array): Uint8Array {
  // First the exact length, so that the bytes are written once.
  let len = start;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) len += 1;
    else if (c < 0x800) len += 2;
    else if (isHigh(c) && i + 1 < s.length && isLow(s.charCodeAt(i + 1))) {
      len += 4;
      i++;
    } else len += 3; // the rest of the BMP, and a lone surrogate (U+FFFD)
  }
  const out = new Uint8Array(len);
  out.set(prefix.subarray(0, start));
  let o = start;
  for (let i = start; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (isHigh(c) && i + 1 < s.length && isLow(s.charCodeAt(i + 1))) {
      c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(i + 1) - 0xdc00);
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out[o++] = c;
    else if (c < 0x800) {
      out[o++] = 0xc0 | (c >> 6);
      out[o++] = 0x80 | (c & 63);
    } else if (c < 0x10000) {
      out[o++] = 0xe0 | (c >> 12);
      out[o++] = 0x80 | ((c >> 6) & 63);
      out[o++] = 0x80 | (c & 63);
    } else {
      out[o++] = 0xf0 | (c >> 18);
      out[o++] = 0x80 | ((c >> 12) & 63);
      out[o++] = 0x80 | ((c >> 6) & 63);
      out[o++] = 0x80 | (c & 63);
    }
  }
  return out;
}

/** At most this many code units go through one `String.fromCharCode` call (its arguments sit on the engine's stack). */
const CHUNK = 4096;

/** UTF-8 bytes as a string (invalid sequences become U+FFFD). */
export function decodeUtf8(bytes: Uint8Array): string {
  // An array of numbers from plain JavaScript was always read too: the runs below need `subarray`.
  const b = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes as ArrayLike<number>);
  let s = "";
  for (let i = 0; i < b.length; ) {
    // A run of ASCII becomes text in one call.
    let end = i;
    const limit = Math.min(b.length, i + CHUNK);
    while (end < limit && b[end]! < 0x80) end++;
    if (end > i) {
      s += String.fromCharCode.apply(null, b.subarray(i, end) as unknown as number[]);
      i = end;
      continue;
    }
    const x = b[i]!;
    let c = 0xfffd;
    let n = 1;
    if (x >= 0xc2 && x < 0xe0 && cont(b, i + 1)) {
      c = ((x & 31) << 6) | (b[i + 1]! & 63);
      n = 2;
    } else if (x >= 0xe0 && x < 0xf0 && cont(b, i + 1) && cont(b, i + 2)) {
      const v = ((x & 15) << 12) | ((b[i + 1]! & 63) << 6) | (b[i + 2]! & 63);
      if (v >= 0x800 && (v < 0xd800 || v > 0xdfff)) c = v;
      n = 3;
    } else if (x >= 0xf0 && x < 0xf5 && cont(b, i + 1) && cont(b, i + 2) && cont(b, i + 3)) {
      const v = ((x & 7) << 18) | ((b[i + 1]! & 63) << 12) | ((b[i + 2]! & 63) << 6) | (b[i + 3]! & 63);
      if (v >= 0x10000 && v <= 0x10ffff) c = v;
      n = 4;
    }
    s += String.fromCodePoint(c);
    i += n;
  }
  return s;
}

function cont(b: Uint8Array, i: number): boolean {
  return i < b.length && (b[i]! & 0xc0) === 0x80;
}
