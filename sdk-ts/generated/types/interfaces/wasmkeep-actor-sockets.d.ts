/// <reference path="./wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/sockets@0.2.4' {
  /**
   * Sends a message to one of the actor's sockets.
   */
  export function send(socket: SocketId, message: Message): void;
  /**
   * Closes a socket with a WebSocket close code (1000 normal, 4000-4999
   * the app's own) and a reason. Its `on-socket-close` event follows.
   */
  export function close(socket: SocketId, code: number, reason: string): void;
  /**
   * The actor's open sockets.
   */
  export function openSockets(): BigUint64Array;
  export type Message = import('wasmkeep:actor/types@0.2.4').Message;
  /**
   * Identifies one socket for its whole life; never reused by a host run.
   */
  export type SocketId = bigint;
  /**
   * Why a socket call failed.
   * # Variants
   * 
   * ## `"not-open"`
   * 
   * The socket is closed, closing, or not one of this actor's.
   */
  export type SocketError = 'not-open';
}
