/**
 * `defineActor`: the event handlers of an actor.
 * @module
 */
import type { Address } from "./context.js";
import type { Request, Responder, ResponseLike } from "./http.js";
import type { SocketId } from "./sockets.js";



/**
 * An actor's handlers. Every one is optional and synchronous; each event runs
 * alone (one at a time per actor). Keep state in `storage`: module variables
 * may or may not survive between events.
 */
export interface ActorHandlers {
  /** Once per new database, before the first other event (and again after a delete). */
  onInit?(): void;
  /**
   * A request routed to this actor. Return the answer, or send it early with
   * `responder.send(...)` (e.g. before `storage.deleteSelfDurable()`). Without
   * this handler requests get 404. A throw fails the event: an open
   * transaction is rolled back and an unanswered request gets 500.
   */
  onRequest?(request: Request, responder: Responder): ResponseLike;
  /** The alarm's time has come. It is already cleared; set it again to repeat. */
  onAlarm?(): void;
  /**
   * Another actor called this one (`caller`), or the host did (`null`).
   * Return the answer; a throw answers the caller `CallError` `"rejected"`
   * with the error's message.
   */
  onCall?(payload: Uint8Array, caller: Address | null): Uint8Array | string | void;
  /** A WebSocket opened on `/<class>/<name>/<path>`. */
  onSocketOpen?(socket: SocketId, path: string): void;
  /** A message arrived: text as `string`, binary as `Uint8Array`. */
  onSocketMessage?(socket: SocketId, message: string | Uint8Array): void;
  /** A socket closed (by the client, or by the actor after the event that closed it). */
  onSocketClose?(socket: SocketId, code: number, reason: string): void;
}

export const ACTOR = Symbol.for("wasmkeep.actor");

/** What {@link defineActor} returns; `export default` it from the actor's entry module. */
export interface ActorDefinition {
  readonly handlers: ActorHandlers;
  readonly [ACTOR]: true;
}

/**
 * Defines an actor. The entry module given to `wasmkeep-build` must
 * `export default` the result.
 *
 * ```ts
 * import { defineActor, storage, text } from "@wasmkeep/actor";
 *
 * export default defineActor({
 *   onInit() {
 *     storage.exec("CREATE TABLE visits(at INTEGER)");
 *   },
 *   onRequest(req) {
 *     storage.exec("INSERT INTO visits VALUES (?)", Date.now());
 *     return text("hello");
 *   },
 * });
 * ```
 */
export function defineActor(handlers: ActorHandlers): ActorDefinition {
  return { handlers, [ACTOR]: true };
}

/** Whether `x` came from {@link defineActor}. */
export function isActorDefinition(x: unknown): x is ActorDefinition {
  return x !== null && typeof x === "object" && (x as Record<symbol, unknown>)[ACTOR] === true;
}

