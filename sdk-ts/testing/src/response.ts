// What an actor answers: a request's response, a call's failure, a socket's messages.
import type { NativeHost, NativeResponse } from "./native.js";
import type { SocketReceived } from "./types.js";

const decoder = new TextDecoder();

/** @internal Bytes for the addon: a string as UTF-8, nothing as empty. */
export function toBuffer(b: string | Uint8Array | undefined | null): Buffer {
  if (b === undefined || b === null) return Buffer.alloc(0);
  return typeof b === "string" ? Buffer.from(b, "utf8") : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** An actor's answer. */
export class TestResponse {
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: Uint8Array;
  /** @internal */
  constructor(r: NativeResponse) {
    this.status = r.status;
    this.headers = r.headers.map(([k, v]) => [k, v]);
    this.body = new Uint8Array(r.body);
  }
  /** The first value of a header (case-insensitive). */
  header(name: string): string | undefined {
    const n = name.toLowerCase();
    return this.headers.find(([k]) => k.toLowerCase() === n)?.[1];
  }
  text(): string {
    return decoder.decode(this.body);
  }
  json<T = unknown>(): T {
    return JSON.parse(this.text()) as T;
  }
}

/** A host call failed: `code` is `"refused"`, `"rejected"` or `"failed"`. */
export class CallFailure extends Error {
  readonly code: "refused" | "rejected" | "failed";
  /** @internal */
  constructor(code: "refused" | "rejected" | "failed", message: string) {
    super(message);
    this.name = "CallFailure";
    this.code = code;
  }
}

/** A WebSocket client connected to an actor. */
export class TestSocket {
  readonly #native: NativeHost;
  /** The socket's id, as the actor sees it. */
  readonly id: number;
  /** @internal */
  constructor(native: NativeHost, id: number) {
    this.#native = native;
    this.id = id;
  }
  /** Sends a message (the actor's `onSocketMessage` runs). */
  send(message: string | Uint8Array): void {
    this.#native.socketSend(this.id, typeof message === "string" ? message : toBuffer(message));
  }
  /** The client closes the socket (the actor's `onSocketClose` runs). */
  close(code = 1000, reason = ""): void {
    this.#native.socketClose(this.id, code, reason);
  }
  /** What the actor sent since the last call, in order. Call `actor.settle()` first after `send`. */
  received(): SocketReceived[] {
    return this.#native.socketTake(this.id).map((o) => ("text" in o ? o.text : "binary" in o ? Uint8Array.from(o.binary) : { close: o.close }));
  }
}
