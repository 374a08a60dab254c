/**
 * Not public API: what `wasmkeep-build` wires into the component (the WIT
 * `events` export). May change in any release.
 * @module
 */
import { ResponseOutparam, type Request as WitRequest } from "wasmkeep:actor/http@0.2.3";
import type { Address as WitAddress, Message as WitMessage } from "wasmkeep:actor/types@0.2.3";
import { reportFailure } from "wasmkeep:actor/context@0.2.3";
import { isActorDefinition, type ActorDefinition, type ActorHandlers } from "./actor.js";
import { log } from "./context.js";
import { article, describeThrown, duringEvent, headline, printError, repr } from "./event.js";
import { Request, headerPairs, text, type Responder, type Response } from "./http.js";
import { flush } from "./storage.js";
import { encodeUtf8 } from "./utf8.js";

/** The WIT form of an answer. */
export function toWitResponse(r: Response | string): { status: number; headers: [string, string][]; body: Uint8Array } {
  if (typeof r === "string") return { status: 200, headers: [["content-type", "text/plain; charset=utf-8"]], body: encodeUtf8(r) };
  const body = r.body === undefined ? new Uint8Array() : typeof r.body === "string" ? encodeUtf8(r.body) : r.body;
  return { status: r.status ?? 200, headers: r.headers ? headerPairs(r.headers) : [], body };
}

/** What an answer becomes when the writes it would acknowledge are not known to be kept. */
function notKept(err: unknown): Response {
  const why = err instanceof Error ? err.message : String(err);
  return {
    status: 503,
    headers: { "content-type": "text/plain; charset=utf-8", "retry-after": "1" },
    body: `the writes of this request are not known to be kept (${why}); try again`,
  };
}

export function responder(out: ResponseOutparam): Responder {
  let sent = false;
  const sendNow = (response: Response | string) => {
    if (sent) throw new Error("the response was already sent");
    checkAnswer(response);
    sent = true;
    ResponseOutparam.set(out, toWitResponse(response));
  };
  return {
    send(response) {
      if (sent) throw new Error("the response was already sent");
      checkAnswer(response);
      const status = typeof response === "string" ? 200 : (response.status ?? 200);
      try {
        flush();
      } catch (err) {
        if (status < 500) response = notKept(err);
      }
      sendNow(response);
    },
    sendBeforeKept: sendNow,
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
  return duringEvent(() => {
    try {
      return f();
    } catch (err) {
      const text = report(what, err, "the event failed", new Error().stack, true);
      let head = text.split("\n")[0]!;
      if (head.length > MAX_TRAP_TEXT) head = `${head.slice(0, MAX_TRAP_TEXT)}…`;
      throw `${what} failed: ${head}`;
    }
  });
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
  if (r.status !== undefined && (typeof r.status !== "number" || !Number.isInteger(r.status) || r.status < 0 || r.status > 65535)) {
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
function __wasmkeepEvent<K extends keyof ActorHandlers>(
  handlers: ActorHandlers,
  name: K,
  ...args: Parameters<NonNullable<ActorHandlers[K]>>
): ReturnType<NonNullable<ActorHandlers[K]>> {
  // A method call (not `apply`): no native frame between this one and the handler's.
  return (handlers as Record<K, (...a: unknown[]) => ReturnType<NonNullable<ActorHandlers[K]>>>)[name](...args);
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
      if (h.onInit) guard("onInit", () => notPromise("onInit", __wasmkeepEvent(h, "onInit")));
    },
    onRequest(req: WitRequest, out: ResponseOutparam): void {
      const r = responder(out);
      if (!h.onRequest) {
        r.send(text("no onRequest handler", 404));
        return;
      }
      const request = new Request(req.method, req.path, req.headers, req.body);
      guard("onRequest", () => {
        const answer: unknown = __wasmkeepEvent(h, "onRequest", request, r);
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
      if (h.onAlarm) guard("onAlarm", () => notPromise("onAlarm", __wasmkeepEvent(h, "onAlarm")));
    },
    onCall(caller: WitAddress | undefined, payload: Uint8Array): Uint8Array {
      if (!h.onCall) throw new CallRejection("this actor takes no calls (no onCall handler)");
      return duringEvent(() => {
        let answer: Uint8Array | string | void;
        try {
          answer = __wasmkeepEvent(h, "onCall", payload, caller ? { class: caller.class, name: caller.name } : null);
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
      if (h.onSocketOpen) guard("onSocketOpen", () => notPromise("onSocketOpen", __wasmkeepEvent(h, "onSocketOpen", Number(socket), path)));
    },
    onSocketMessage(socket: bigint, message: WitMessage): void {
      if (h.onSocketMessage) guard("onSocketMessage", () => notPromise("onSocketMessage", __wasmkeepEvent(h, "onSocketMessage", Number(socket), message.val)));
    },
    onSocketClose(socket: bigint, code: number, reason: string): void {
      if (h.onSocketClose) guard("onSocketClose", () => notPromise("onSocketClose", __wasmkeepEvent(h, "onSocketClose", Number(socket), code, reason)));
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
