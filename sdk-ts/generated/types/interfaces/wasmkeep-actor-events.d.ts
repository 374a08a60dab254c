/// <reference path="./wasmkeep-actor-http.d.ts" />
/// <reference path="./wasmkeep-actor-sockets.d.ts" />
/// <reference path="./wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/events@0.2.4' {
  /**
   * Runs once per new database, before the first other event, in the same
   * event. It runs again after the actor was deleted. If it traps, it runs
   * again before the next event.
   */
  export function onInit(): void;
  /**
   * A request routed to this actor. Set the answer with
   * `response-outparam.set`.
   */
  export function onRequest(request: Request, out: ResponseOutparam): void;
  /**
   * The alarm's time has come. The alarm is already cleared when this runs;
   * set it again to repeat.
   */
  export function onAlarm(): void;
  /**
   * Another actor called this one (`caller`), or the host did (none).
   */
  export function onCall(caller: Address | undefined, payload: Uint8Array): Uint8Array;
  /**
   * A WebSocket opened on `/<class>/<name>/<path>`.
   */
  export function onSocketOpen(socket: SocketId, path: string): void;
  /**
   * A message arrived on an open socket.
   */
  export function onSocketMessage(socket: SocketId, message: Message): void;
  /**
   * A socket closed, by the client or by the actor (after the event that
   * closed it). Sockets the host closes because the actor was deleted (1000
   * "actor deleted") get no event: it would create a new actor.
   */
  export function onSocketClose(socket: SocketId, code: number, reason: string): void;
  export type Address = import('wasmkeep:actor/types@0.2.4').Address;
  export type Message = import('wasmkeep:actor/types@0.2.4').Message;
  export type Request = import('wasmkeep:actor/http@0.2.4').Request;
  export type ResponseOutparam = import('wasmkeep:actor/http@0.2.4').ResponseOutparam;
  export type SocketId = import('wasmkeep:actor/sockets@0.2.4').SocketId;
}
