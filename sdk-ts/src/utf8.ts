// UTF-8 without TextEncoder/TextDecoder, which not every JS engine a
// component can be built on provides.

/** `s` as UTF-8 bytes, in any JS engine (lone surrogates become U+FFFD). */
export function encodeUtf8(s: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

/** UTF-8 bytes as a string (invalid sequences become U+FFFD). */
export function decodeUtf8(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; ) {
    const x = b[i]!;
    let c = 0xfffd;
    let n = 1;
    if (x < 0x80) c = x;
    else if (x >= 0xc2 && x < 0xe0 && cont(b, i + 1)) {
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
