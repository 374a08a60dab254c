/**
 * Calls to other actors of the same app. The caller waits; the callee runs
 * `onCall` in its own mailbox.
 * @module
 */
import { decodeUtf8, encodeUtf8 } from "./utf8.js";
import * as wit from "wasmkeep:actor/calls@0.2.4";
import type { Address } from "./context.js";
import { CallError, payloadOf, type CallErrorCode } from "./errors.js";
import { requireEvent } from "./event.js";




/**
 * Runs `onCall` on the target actor (creating it if its class allows) and
 * returns its answer's bytes.
 * @throws {CallError} `"refused"`, `"rejected"` or `"failed"`.
 */
export function call(target: Address, payload: string | Uint8Array = new Uint8Array()): Uint8Array {
  requireEvent("calls.call");
  const bytes = typeof payload === "string" ? encodeUtf8(payload) : payload;
  try {
    return wit.call({ class: target.class, name: target.name }, bytes);
  } catch (err) {
    const p = payloadOf(err);
    if (p !== undefined) throw new CallError(p.tag as CallErrorCode, String(p.val));
    throw err;
  }
}

/** {@link call}, with the answer decoded as UTF-8 text. */
export function callText(target: Address, payload: string | Uint8Array = ""): string {
  return decodeUtf8(call(target, payload));
}

/** {@link call} with a JSON payload and a JSON answer. */
export function callJson<T = unknown>(target: Address, payload: unknown): T {
  return JSON.parse(callText(target, JSON.stringify(payload))) as T;
}

export { CallError };
