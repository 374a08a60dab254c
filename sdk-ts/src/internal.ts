/**
 * Not public API: what `wasmkeep-build` wires into the component (the WIT
 * `events` export). May change in any release.
 * @module
 */
import { ResponseOutparam, type Request as WitRequest } from "wasmkeep:actor/http@0.2.4";
import type { Address as WitAddress, Message as WitMessage } from "wasmkeep:actor/types@0.2.4";
import { reportFailure } from "wasmkeep:actor/context@0.2.4";
import { isActorDefinition, type ActorDefinition, type ActorHandlers } from "./actor.js";
import { log } from "./context.js";
import { article, describeThrown, duringEvent, eventBegins, eventEnds, headline, printError, repr } from "./event.js";
import { Request, headerPairs, notKept, text, type Responder, type Response } from "./http.js";
import { flush } from "./storage.js";
import { encodeUtf8 } from "./utf8.js";

const NO_BYTES = new Uint8Array();
const NO_HEADERS: ReadonlyArray<readonly [string, string]> = [];

/** The WIT form of an answer. The bindings only read it, so it may share the answer's arrays. */
export function toWitResponse(r: Response | string): { status: number; headers: [string, string][]; body: Uint8Array } {
  if (typeof r === "string") return { status: 200, headers: [["content-type", "text/plain; charset=utf-8"]], body: encodeUtf8(r) };
  const body = r.body === undefined ? NO_BYTES : typeof r.body === "string" ? encodeUtf8(r.body) : r.body;
  const headers = r.headers ? headerPairs(r.headers) : NO_HEADERS;
  return { status: r.status ?? 200, headers: headers as [string, string][], body };
}

function alreadySent(): never {
  throw new Error("the response was already sent");
}

export function responder(out: ResponseOutparam): Responder {
  // Closures, so that a method taken off the responder (`const { send } =
  // responder`) still works; one made per request, so no more of them than
  // the two methods and the getter.
  let sent = false;
  return {
    send(response) {
      if (sent) alreadySent();
      checkAnswer(response);
      const status = typeof response === "string" ? 200 : (response.status ?? 200);
      try {
        flush();
      } catch (err) {
        if (status < 500) response = notKept(err);
      }
      sent = true;
      ResponseOutparam.set(out, toWitResponse(response));
    },
    sendBeforeKept(response) {
      if (sent) alreadySent();
      checkAnswer(response);
      sent = true;
      ResponseOutparam.set(out, toWitResponse(response));
    },
    get sent() {
      return sent;
    },
  };
}

function notPromise(what: string, r: unknown): void {
  if (r instanceof Promise) throw new TypeError(`${what} returned a promise: actor handlers must be synchronous`);
}

/** At most this much of the headline goes into the value the event traps with. */
const MAX_TRAP_TEXT = 300;

/**
 * Tells the host why the event fails: the first line of `text` is the
 * message, the rest (the stack) the detail. False if the call itself failed,
 * so that the caller prints the report instead.
 */
function reportedToHost(text: string): boolean {
  const newline = text.indexOf("\n");
  try {
    reportFailure({
      message: newline < 0 ? text : text.slice(0, newline),
      detail: newline < 0 ? "" : text.slice(newline + 1),
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * Reports what escaped a handler. A failing event (`failing`) tells the host
 * through the WIT (`context.report-failure`, 0.2.3), whose answer for the
 * event then starts with it (`TypeError: message`, then the stack); an
 * exception that only answers a call `rejected` goes to the guest's output.
 * Then to the host's log. Never throws: reporting must not hide the failure.
 */
function report(what: string, err: unknown, outcome: string, base?: string, failing = false): string {
  let text: string;
  try {
    text = describeThrown(err, base);
  } catch {
    text = "(a value that cannot be described was thrown)";
  }
  if (!(failing && reportedToHost(text))) printError(text);
  try {
    log("error", `${what} threw (${outcome}): ${text}`);
  } catch {
    // Logging must never hide the original failure.
  }
  return text;
}

/**
 * Runs a handler as an event. What it throws fails the event: it is reported
 * ({@link report}: the host answers with that report), then the event traps
 * with a short string, which the engine prints to stderr for `serve`'s log (a
 * string has no second stack to print, and unlike `undefined` or `null` it
 * passes through the bindings).
 */
function guard<T>(what: string, f: () => T): T {
  eventBegins();
  try {
    return f();
  } catch (err) {
    const text = report(what, err, "the event failed", new Error().stack, true);
    let head = text.split("\n")[0]!;
    if (head.length > MAX_TRAP_TEXT) head = `${head.slice(0, MAX_TRAP_TEXT)}…`;
    throw `${what} failed: ${head}`;
  } finally {
    eventEnds();
  }
}

/** Checks an answer before it is sent: a mistake gets a TypeError saying what is wrong, not an error inside the bindings. */
function checkAnswer(answer: unknown): void {
  if (typeof answer === "string") return;
  if (answer === null || typeof answer !== "object" || answer instanceof Uint8Array || Array.isArray(answer)) {
    throw new TypeError(
      `the answer is ${answer === null ? "null" : Array.isArray(answer) ? "an array" : `${article(typeof answer)} ${typeof answer}`}: ` +
        "answer with a string, text(...), json(...) or {status, headers, body} (or send it with responder.send(...) and return nothing)",
    );
  }
  const r = answer as { status?: unknown; body?: unknown };
  // `(s & 0xffff) === s`: an integer from 0 to 65535, without calling Number.isInteger.
  if (r.status !== undefined && (typeof r.status !== "number" || (r.status & 0xffff) !== r.status)) {
    throw new TypeError(`the response's status is ${repr(r.status)}: a status is an integer such as 200 or 404`);
  }
  if (r.body !== undefined && typeof r.body !== "string" && !(r.body instanceof Uint8Array)) {
    throw new TypeError(`the response's body is ${r.body === null ? "null" : `${article(typeof r.body)} ${typeof r.body}`}: a body is a string or a Uint8Array (json(value) makes a JSON answer)`);
  }
}

/**
 * Calls a handler of the actor. Its name marks where the actor's own frames
 * end in a stack: `describeThrown` leaves out the SDK's frames below it.
 */
function __wasmkeepEvent(handlers: ActorHandlers, name: keyof ActorHandlers, arity: 0 | 2 | 3, a?: unknown, b?: unknown, c?: unknown): unknown {
  // A method call (not `apply`): no native frame between this one and the
  // handler's. The handler gets exactly its event's arguments: no rest
  // parameter, which would copy them into an array on every event.
  const hs = handlers as Record<string, (...args: unknown[]) => unknown>;
  return arity === 0 ? hs[name]!() : arity === 2 ? hs[name]!(a, b) : hs[name]!(a, b, c);
}

/** An error an `onCall` export throws: its `payload` is the WIT `result`'s `err` value. */
class CallRejection extends Error {
  readonly payload: string;
  constructor(message: string) {
    super(message);
    this.payload = message;
  }
}

/**
 * The WIT `events` export of an actor definition. `wasmkeep-build`
 * wires it up; you never call it.
 */
export function eventsOf(def: ActorDefinition) {
  const h = def.handlers;
  return {
    onInit(): void {
      if (h.onInit) guard("onInit", () => notPromise("onInit", __wasmkeepEvent(h, "onInit", 0)));
    },
    onRequest(req: WitRequest, out: ResponseOutparam): void {
      const r = responder(out);
      if (!h.onRequest) {
        r.send(text("no onRequest handler", 404));
        return;
      }
      const request = new Request(req.method, req.path, req.headers, req.body);
      guard("onRequest", () => {
        const answer: unknown = __wasmkeepEvent(h, "onRequest", 2, request, r);
        if (answer instanceof Promise) {
          if (!r.sent) r.send(text("onRequest returned a promise: actor handlers must be synchronous", 500));
          return;
        }
        if (answer === undefined) {
          if (!r.sent) r.send(text("onRequest returned no response", 500));
          return;
        }
        r.send(answer as Response | string);
      });
    },
    onAlarm(): void {
      if (h.onAlarm) guard("onAlarm", () => notPromise("onAlarm", __wasmkeepEvent(h, "onAlarm", 0)));
    },
    onCall(caller: WitAddress | undefined, payload: Uint8Array): Uint8Array {
      if (!h.onCall) throw new CallRejection("this actor takes no calls (no onCall handler)");
      return duringEvent(() => {
        let answer: Uint8Array | string | void;
        try {
          answer = <Uint8Array | string | void>__wasmkeepEvent(h, "onCall", 2, payload, caller ? { class: caller.class, name: caller.name } : null);
        } catch (err) {
          report("onCall", err, 'the caller gets CallError "rejected"');
          throw new CallRejection(err instanceof Error ? err.message : typeof err === "string" ? err : headline(err));
        }
        if (answer instanceof Promise) throw new CallRejection("onCall returned a promise: actor handlers must be synchronous");
        if (answer === undefined || typeof answer === "string" || answer instanceof Uint8Array) {
          // The caller hears the answer only once what this call wrote is kept.
          try {
            flush();
          } catch (err) {
            throw new CallRejection(`the call's writes are not known to be kept (${err instanceof Error ? err.message : String(err)}); try again`);
          }
        }
        if (answer === undefined) return new Uint8Array();
        if (typeof answer === "string") return encodeUtf8(answer);
        if (answer instanceof Uint8Array) return answer;
        const bad = `onCall returned ${answer === null ? "null" : `${article(typeof answer)} ${typeof answer}`}: return a string, a Uint8Array or nothing`;
        report("onCall", new TypeError(bad), 'the caller gets CallError "rejected"');
        throw new CallRejection(bad);
      });
    },
    onSocketOpen(socket: bigint, path: string): void {
      if (h.onSocketOpen) guard("onSocketOpen", () => notPromise("onSocketOpen", __wasmkeepEvent(h, "onSocketOpen", 2, Number(socket), path)));
    },
    onSocketMessage(socket: bigint, message: WitMessage): void {
      if (h.onSocketMessage) guard("onSocketMessage", () => notPromise("onSocketMessage", __wasmkeepEvent(h, "onSocketMessage", 2, Number(socket), message.val)));
    },
    onSocketClose(socket: bigint, code: number, reason: string): void {
      if (h.onSocketClose) guard("onSocketClose", () => notPromise("onSocketClose", __wasmkeepEvent(h, "onSocketClose", 3, Number(socket), code, reason)));
    },
  };
}

/** The `events` export of an entry module whose default export is an actor definition. */
export function eventsOfModule(m: Record<string, unknown>, entry: string) {
  const def = m["default"];
  if (!isActorDefinition(def)) {
    throw new TypeError(`${entry}: the default export must be an actor: export default defineActor({ ... })`);
  }
  return eventsOf(def);
}
