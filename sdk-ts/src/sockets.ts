/**
 * The actor's open WebSockets. A socket opens with `onSocketOpen`; its id
 * stays the same for its whole life and is never reused by a host run.
 * @module
 */
import * as wit from "wasmkeep:actor/sockets@0.2.3";
import { int64 } from "./abi.js";
import { requireEvent } from "./event.js";
import { SocketError, errorValueOf } from "./errors.js";

/** Identifies one socket (a WIT `u64`; host ids stay far below 2^53). */
export type SocketId = number;

function call<T>(what: string, f: () => T): T {
  requireEvent(what);
  try {
    return f();
  } catch (err) {
    // The WIT error is the enum `socket-error`, whose one case arrives as the string "not-open".
    if (errorValueOf(err) === "not-open") throw new SocketError();
    throw err;
  }
}

/**
 * Sends a text (`string`) or binary (`Uint8Array`) message.
 * @throws {SocketError} the socket is closed, closing, or not this actor's.
 */
export function send(socket: SocketId, message: string | Uint8Array): void {
  const m = typeof message === "string" ? { tag: "text" as const, val: message } : { tag: "binary" as const, val: message };
  call("sockets.send", () => wit.send(int64(socket), m));
}

/**
 * Closes a socket with a close code (1000 normal, 4000-4999 the app's own)
 * and a reason; its `onSocketClose` event follows.
 * @throws {SocketError} the socket is not open.
 */
export function close(socket: SocketId, code = 1000, reason = ""): void {
  call("sockets.close", () => wit.close(int64(socket), code, reason));
}

/** The actor's open sockets. */
export function open(): SocketId[] {
  requireEvent("sockets.open");
  return Array.from(wit.openSockets(), Number);
}

/** Sends `message` to every open socket except `except`; returns how many it reached. */
export function broadcast(message: string | Uint8Array, except?: SocketId): number {
  let n = 0;
  for (const id of open()) {
    if (id === except) continue;
    try {
      send(id, message);
      n++;
    } catch (err) {
      if (!(err instanceof SocketError)) throw err;
    }
  }
  return n;
}

export { SocketError };
