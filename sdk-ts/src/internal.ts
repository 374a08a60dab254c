/**
 * Not public API: what `wasmkeep-build` wires into the component (the WIT
 * `events` export). May change in any release.
 * @module
 */
import { ResponseOutparam, type Request as WitRequest } from "wasmkeep:actor/http@0.2.1";
import type { Address as WitAddress, Message as WitMessage } from "wasmkeep:actor/types@0.2.1";
import { isActorDefinition, type ActorDefinition } from "./actor.js";
import { log } from "./context.js";
import { Request, headerPairs, text, type Responder, type Response } from "./http.js";
import { encodeUtf8 } from "./utf8.js";

/** The WIT form of an answer. */
export function toWitResponse(r: Response | string): { status: number; headers: [string, string][]; body: Uint8Array } {
  if (typeof r === "string") return { status: 200, headers: [["content-type", "text/plain; charset=utf-8"]], body: encodeUtf8(r) };
  const body = r.body === undefined ? new Uint8Array() : typeof r.body === "string" ? encodeUtf8(r.body) : r.body;
  return { status: r.status ?? 200, headers: r.headers ? headerPairs(r.headers) : [], body };
}

export function responder(out: ResponseOutparam): Responder {
  let sent = false;
  return {
    send(response) {
      if (sent) throw new Error("the response was already sent");
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

/** Logs an error that escapes a handler, then rethrows it (the event fails). */
function guard<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    try {
      log("error", `${what} threw:`, err);
    } catch {
      // Logging must never hide the original failure.
    }
    throw err;
  }
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
      if (h.onInit) guard("onInit", () => notPromise("onInit", h.onInit!()));
    },
    onRequest(req: WitRequest, out: ResponseOutparam): void {
      const r = responder(out);
      if (!h.onRequest) {
        r.send(text("no onRequest handler", 404));
        return;
      }
      const request = new Request(req.method, req.path, req.headers, req.body);
      const answer = guard("onRequest", () => h.onRequest!(request, r));
      if (answer instanceof Promise) {
        if (!r.sent) r.send(text("onRequest returned a promise: actor handlers must be synchronous", 500));
        return;
      }
      if (answer !== undefined) r.send(answer);
      else if (!r.sent) r.send(text("onRequest returned no response", 500));
    },
    onAlarm(): void {
      if (h.onAlarm) guard("onAlarm", () => notPromise("onAlarm", h.onAlarm!()));
    },
    onCall(caller: WitAddress | undefined, payload: Uint8Array): Uint8Array {
      if (!h.onCall) throw new CallRejection("this actor takes no calls (no onCall handler)");
      let answer: Uint8Array | string | void;
      try {
        answer = h.onCall(payload, caller ? { class: caller.class, name: caller.name } : null);
      } catch (err) {
        throw new CallRejection(err instanceof Error ? err.message : String(err));
      }
      if (answer instanceof Promise) throw new CallRejection("onCall returned a promise: actor handlers must be synchronous");
      return answer === undefined ? new Uint8Array() : typeof answer === "string" ? encodeUtf8(answer) : answer;
    },
    onSocketOpen(socket: bigint, path: string): void {
      if (h.onSocketOpen) guard("onSocketOpen", () => notPromise("onSocketOpen", h.onSocketOpen!(Number(socket), path)));
    },
    onSocketMessage(socket: bigint, message: WitMessage): void {
      if (h.onSocketMessage) guard("onSocketMessage", () => notPromise("onSocketMessage", h.onSocketMessage!(Number(socket), message.val)));
    },
    onSocketClose(socket: bigint, code: number, reason: string): void {
      if (h.onSocketClose) guard("onSocketClose", () => notPromise("onSocketClose", h.onSocketClose!(Number(socket), code, reason)));
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
