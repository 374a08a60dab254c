/**
 * Requests routed to the actor and the answers it gives.
 * @module
 */
import { decodeUtf8, encodeUtf8 } from "./utf8.js";




/** A request for `/<class>/<name>/<path>`. */
export class Request {
  // `declare`: the constructor sets each field once. A class field would be
  // defined first and then set, two property writes per field on every
  // request, in an interpreter.
  /** `GET`, `POST`, ... */
  declare readonly method: string;
  /** What follows `/<class>/<name>`, with the query string: `/`, `/items?page=2`. */
  declare readonly path: string;
  /** Header names and values, in order. */
  declare readonly headers: ReadonlyArray<readonly [string, string]>;
  /** The body's bytes. */
  declare readonly body: Uint8Array;

  constructor(method: string, path: string, headers: ReadonlyArray<readonly [string, string]> = [], body: Uint8Array | string = new Uint8Array()) {
    this.method = method;
    this.path = path;
    this.headers = headers;
    this.body = typeof body === "string" ? encodeUtf8(body) : body;
  }

  /** The path without its query string: `/items` for `/items?page=2`. */
  get pathname(): string {
    const q = this.path.indexOf("?");
    return q < 0 ? this.path : this.path.slice(0, q);
  }

  /** The query string's parameters (decoded); the first value of a repeated name. */
  get query(): Record<string, string> {
    const q = this.path.indexOf("?");
    const out: Record<string, string> = {};
    if (q < 0) return out;
    for (const part of this.path.slice(q + 1).split("&")) {
      if (part === "") continue;
      const eq = part.indexOf("=");
      const k = decode(eq < 0 ? part : part.slice(0, eq));
      if (!(k in out)) out[k] = eq < 0 ? "" : decode(part.slice(eq + 1));
    }
    return out;
  }

  /** The first value of a header (names compare case-insensitively), or `undefined`. */
  header(name: string): string | undefined {
    const n = name.toLowerCase();
    return this.headers.find(([k]) => k.toLowerCase() === n)?.[1];
  }

  /** The body as UTF-8 text. */
  text(): string {
    return decodeUtf8(this.body);
  }

  /** The body parsed as JSON. @throws {SyntaxError} it is not JSON. */
  json<T = unknown>(): T {
    return JSON.parse(this.text()) as T;
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}

/** Headers of a response: pairs in order, or an object. */
export type HeadersInit = ReadonlyArray<readonly [string, string]> | Record<string, string>;

/** The actor's answer to a request. */
export interface Response {
  /** The status code (default 200). */
  status?: number;
  /** Headers (default none). */
  headers?: HeadersInit;
  /** The body: text is sent as UTF-8 (default empty). */
  body?: string | Uint8Array;
}

/** What `onRequest` may return: a {@link Response}, a string (200, `text/plain`), or nothing once it used the responder. */
export type ResponseLike = Response | string | void;

/** Status and headers for {@link text} and {@link json}: a status code, or both. */
export type ResponseInit = number | { status?: number; headers?: HeadersInit };

const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json";

/** An answer of `contentType` with status and headers from `i`: built in one object, as the common `text(body)` runs on every request. */
function answer(body: string, contentType: string, i: ResponseInit | undefined): Response {
  if (i === undefined) return { status: 200, headers: [["content-type", contentType]], body };
  const status = typeof i === "number" ? i : (i.status ?? 200);
  const headers: [string, string][] = [["content-type", contentType]];
  if (typeof i === "object" && i.headers) for (const h of headerPairs(i.headers)) headers.push([h[0], h[1]]);
  return { status, headers, body };
}

/**
 * The answer when what a request would acknowledge is not known to be kept
 * (`storage.flush()`, `storage.execDurable()` or `storage.deleteSelfDurable()`
 * threw `SqlError` `"internal"`): `503` with `retry-after: 1` and
 * `wasmkeep-failure: not-acknowledged`, the kind the host names the same
 * failure by in its own answers, so that a client knows to retry. The
 * responder answers it by itself when the writes before the answer were not
 * kept; a failed durable delete, which may be called again, answers it too:
 *
 * ```ts
 * try {
 *   storage.deleteSelfDurable();
 * } catch (err) {
 *   if (err instanceof SqlError && err.code === "internal") return notKept(err);
 *   throw err;
 * }
 * ```
 */
export function notKept(err: unknown): Response {
  const why = err instanceof Error ? err.message : String(err);
  return {
    status: 503,
    headers: { "content-type": TEXT, "retry-after": "1", "wasmkeep-failure": "not-acknowledged" },
    body: `the writes of this request are not known to be kept (${why}); try again`,
  };
}

/** A text answer: `text("hello")`, `text("not found", 404)`. */
export function text(body: string, i?: ResponseInit): Response {
  return answer(body, TEXT, i);
}

/**
 * A JSON answer: `json({ n: 1 })`, `json({ error: "no" }, 400)`. `bigint`s are written as numbers.
 * @throws {TypeError} `value` has no JSON form (`undefined`, a function, a symbol): pass `null` for an empty answer.
 */
export function json(value: unknown, i?: ResponseInit): Response {
  const body = stringify(value);
  if (typeof body !== "string") {
    throw new TypeError(
      `json(${value === undefined ? "undefined" : `a ${typeof value}`}): the value has no JSON form, so there would be no body; ` +
        "pass null (the JSON null), an object or an array (a variable that is undefined by mistake?)",
    );
  }
  return answer(body, JSON_TYPE, i);
}

/** A `bigint` as a JSON number (or, without `JSON.rawJSON`, its digits as a string). */
function bigintAsNumber(_key: string, v: unknown): unknown {
  return typeof v === "bigint" ? (JSON.rawJSON?.(v.toString()) ?? v.toString()) : v;
}

/**
 * `JSON.stringify`, with `bigint`s written as numbers. A replacer is called
 * for every value, which in an interpreter costs about a quarter of the
 * whole; so the value is first written without one, and only when that
 * throws (a `bigint` inside, or a cycle, which throws again) with it.
 */
function stringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(value, bigintAsNumber);
  }
}

declare global {
  interface JSON {
    rawJSON?(text: string): unknown;
  }
}

/** Headers as pairs: an array as it is (the bindings only read it), an object's entries in order. */
export function headerPairs(h: HeadersInit): ReadonlyArray<readonly [string, string]> {
  return Array.isArray(h) ? (h as ReadonlyArray<readonly [string, string]>) : Object.entries(h as Record<string, string>);
}

/**
 * Sends the answer before the event ends: the second argument of
 * `onRequest`. The answer goes out at once, whatever the event does
 * afterwards (a delete, a throw). A request never answered gets 500.
 */
export interface Responder {
  /**
   * Sends the answer once the event's writes so far are kept
   * (`storage.flush()`): a 200 then promises what it acknowledges, in a
   * cluster too. If they are not known to be kept, the client is answered 503
   * (with `retry-after`) instead, so it retries; an answer of 500 or more goes
   * out as it is. @throws {Error} it was already sent.
   */
  send(response: Response | string): void;
  /**
   * Sends the answer now, without waiting for the event's writes to be kept:
   * in a cluster they are uploaded when the event ends, after the answer, and
   * may be lost. For answers that acknowledge no write. @throws {Error} it was
   * already sent.
   */
  sendBeforeKept(response: Response | string): void;
  /** Whether the answer was sent. */
  readonly sent: boolean;
}

