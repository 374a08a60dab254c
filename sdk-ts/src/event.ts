/**
 * Not public API: whether an event is running, and how a failure is described.
 *
 * The host's imports (storage, alarms, sockets, calls, the context) exist only
 * while the host runs one of the actor's events. Code at module scope runs
 * when the component is built (both engines snapshot the initialized module
 * with Wizer): it is no place for a host call, so the SDK refuses one there with a message
 * that says where to move it.
 * @module
 */

let depth = 0;

/**
 * Whether the engine has a console of its own, as StarlingMonkey does and
 * QuickJS does not (./console.ts installs a stand-in there). Read when the
 * module loads, before any stand-in exists.
 */
const OWN_CONSOLE: boolean = (globalThis as { console?: unknown }).console !== undefined;

/** See {@link OWN_CONSOLE}. */
export function hasOwnConsole(): boolean {
  return OWN_CONSOLE;
}

/** Runs `f` as (part of) an event: host calls are allowed inside it. */
export function duringEvent<T>(f: () => T): T {
  depth++;
  try {
    return f();
  } finally {
    depth--;
  }
}

/** {@link duringEvent} without a function to call, for a caller with a `try` of its own: each call must be matched by {@link eventEnds} in a `finally`. */
export function eventBegins(): void {
  depth++;
}

/** See {@link eventBegins}. */
export function eventEnds(): void {
  depth--;
}

/** Whether an event is running. */
export function inEvent(): boolean {
  return depth > 0;
}

/** The first words of {@link requireEvent}'s message (`wasmkeep-build` looks for them). */
export const OUTSIDE_EVENT = "called outside an event";

/**
 * Throws unless an event is running.
 * @param what the call, e.g. `"storage.exec"`.
 */
export function requireEvent(what: string): void {
  if (depth > 0) return;
  throw new Error(
    `${what}() was ${OUTSIDE_EVENT} (at module scope, while the module loads): the host's storage, ` +
      "alarms, sockets, calls and context exist only while an event runs. Move it into onInit " +
      "(once per new actor, e.g. CREATE TABLE) or into a handler (onRequest, onAlarm, ...).",
  );
}

function isErrorLike(v: unknown): v is { name?: unknown; message: string; stack?: unknown } {
  return v instanceof Error || (v !== null && typeof v === "object" && typeof (v as { message?: unknown }).message === "string");
}

/** A thrown or returned value, short, for a message. */
export function repr(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "object" && v !== null) {
    try {
      const s = JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x));
      if (s !== undefined) return s;
    } catch {
      // A cycle, a throwing getter: fall through.
    }
  }
  try {
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

/** "a" or "an", for a type's name. */
export const article = (kind: string): string => (/^[aeiou]/.test(kind) ? "an" : "a");

/**
 * The first line of {@link describeThrown}: `TypeError: message` for an
 * error, what was thrown for any other value.
 */
export function headline(err: unknown): string {
  if (isErrorLike(err)) {
    const name = typeof err.name === "string" && err.name !== "" ? err.name : "Error";
    return err.message === "" ? name : `${name}: ${err.message}`;
  }
  if (err === undefined || err === null) return `${String(err)} thrown (not an Error: no stack)`;
  const kind = Array.isArray(err) ? "array" : typeof err;
  return `${repr(err)} thrown (${article(kind)} ${kind}, not an Error: no stack)`;
}

/** The frame of `__wasmkeepEvent` (internal.ts), which calls a handler: the SDK's frames start there. */
const SDK_FRAME = /(^|[\s(])__wasmkeepEvent\b/;

function framesOf(stack: string): string[] {
  return stack
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

/** A frame's function name: `f` of `f@file:1:2` (StarlingMonkey) or `at f (file:1:2)` (QuickJS, V8). */
function functionOf(frame: string): string {
  const m = /^(?:at )?([^@( ]*)/.exec(frame);
  return m ? m[1]! : frame;
}

/**
 * A thrown value as text, whatever the engine: `name: message` first, then
 * the stack one frame a line (`    at ...`), down to the actor's handler: the
 * SDK's frames below it are left out, as are the frames `base` (a stack taken
 * where the value was caught) shares with it. StarlingMonkey's `err.stack`
 * holds only the frames; V8's starts with the message, left out here.
 */
export function describeThrown(err: unknown, base?: string): string {
  const head = headline(err);
  if (!isErrorLike(err)) return head;
  let stack: string;
  try {
    stack = typeof err.stack === "string" ? err.stack : "";
  } catch {
    stack = "";
  }
  const frames = framesOf(stack);
  // V8 and Node put "Name: message" (possibly several lines) before the frames.
  if (frames.length && stack.trimStart().startsWith(head.split("\n")[0]!)) {
    const firstFrame = frames.findIndex((l) => l.startsWith("at "));
    frames.splice(0, firstFrame < 0 ? frames.length : firstFrame);
  }
  const sdk = frames.findIndex((l) => SDK_FRAME.test(l));
  if (sdk >= 0) frames.splice(sdk);
  else if (base !== undefined) {
    // Thrown by the SDK around the handler (an answer of the wrong type):
    // leave out the frames of the catching function and of its callers.
    const b = framesOf(base).filter((l) => !l.startsWith("Error"));
    let shared = 0;
    while (shared < b.length && shared < frames.length && frames[frames.length - 1 - shared] === b[b.length - 1 - shared]) shared++;
    if (shared > 0) {
      frames.splice(frames.length - shared);
      const catcher = b[b.length - 1 - shared];
      if (catcher !== undefined && frames.length && functionOf(frames[frames.length - 1]!) === functionOf(catcher)) frames.pop();
    }
  }
  const lines = frames.map((l) => `    ${l.startsWith("at ") ? l : `at ${l}`}`);
  return [head, ...lines].join("\n");
}

/**
 * Writes to the guest's stderr (which `wasmkeep-shim serve` logs), never
 * throwing. A failed event's answer does not read it: the SDK reports the
 * failure through `context.report-failure` (0.2.3). Does nothing on an engine
 * without a console of its own (QuickJS: the SDK's stand-in writes to the
 * host's log, which has the report already).
 */
export function printError(text: string): void {
  if (!hasOwnConsole()) return;
  try {
    (globalThis as { console?: { error?(s: string): void } }).console?.error?.(text);
  } catch {
    // An engine without a console: the host's log still has it.
  }
}
