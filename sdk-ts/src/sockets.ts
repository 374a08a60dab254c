/**
 * The actor's open WebSockets. A socket opens with `onSocketOpen`; its id
 * stays the same for its whole life and is never reused by a host run.
 * @module
 */
import * as wit from "wasmkeep:actor/sockets@0.2.4";
import { int64 } from "./abi.js";
import { requireEvent } from "./event.js";
import { SocketError, errorValueOf } from "./errors.js";

/** Identifies one socket (a WIT `u64`; host ids stay far below 2^53). */
export type SocketId = number;

/** What the bindings threw, as the SDK's error: the WIT error is the enum `socket-error`, whose one case arrives as the string "not-open". */
function socketError(err: unknown): unknown {
  return errorValueOf(err) === "not-open" ? new SocketError() : err;
}

/** A message in the WIT's form, made once per message (a broadcast sends the same one to every socket). */
function witMessage(message: string | Uint8Array): wit.Message {
  return typeof message === "string" ? { tag: "text", val: message } : { tag: "binary", val: message };
}

// No helper taking a closure: a closure per message costs, in an interpreter (ADR 057).
function sendWit(socket: SocketId, m: wit.Message): void {
  try {
    wit.send(int64(socket), m);
  } catch (err) {
    throw socketError(err);
  }
}

/**
 * Sends a text (`string`) or binary (`Uint8Array`) message.
 * @throws {SocketError} the socket is closed, closing, or not this actor's.
 */
export function send(socket: SocketId, message: string | Uint8Array): void {
  requireEvent("sockets.send");
  sendWit(socket, witMessage(message));
}

/**
 * Closes a socket with a close code (1000 normal, 4000-4999 the app's own)
 * and a reason; its `onSocketClose` event follows.
 * @throws {SocketError} the socket is not open.
 */
export function close(socket: SocketId, code = 1000, reason = ""): void {
  requireEvent("sockets.close");
  try {
    wit.close(int64(socket), code, reason);
  } catch (err) {
    throw socketError(err);
  }
}

/** The actor's open sockets. */
export function open(): SocketId[] {
  requireEvent("sockets.open");
  return Array.from(wit.openSockets(), Number);
}

/** Sends `message` to every open socket except `except`; returns how many it reached. */
export function broadcast(message: string | Uint8Array, except?: SocketId): number {
  let n = 0;
  const m = witMessage(message);
  for (const id of open()) {
    if (id === except) continue;
    try {
      sendWit(id, m);
      n++;
    } catch (err) {
      if (!(err instanceof SocketError)) throw err;
    }
  }
  return n;
}

export { SocketError };
