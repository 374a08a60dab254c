/**
 * Write wasmkeep actors in TypeScript.
 *
 * An actor owns one SQLite database ({@link storage}), one alarm
 * ({@link getAlarm}/{@link setAlarm}/{@link clearAlarm}), its open WebSockets
 * ({@link sockets}) and may call other actors of its app ({@link calls}). The
 * host delivers events one at a time to the handlers given to
 * {@link defineActor}. Build the entry module into a WebAssembly component with
 * `npx wasmkeep-build src/actor.ts -o actor.wasm`.
 *
 * The package wraps the WIT package `wasmkeep:actor@0.2.4` (shipped in `generated/wit/`).
 * @module
 */
export * as storage from "./storage.js";
export * as sockets from "./sockets.js";
export * as calls from "./calls.js";
export * as context from "./context.js";
export { getAlarm, setAlarm, setAlarmIn, clearAlarm } from "./alarms.js";
export { logger as log } from "./context.js";
export type { Address, LogLevel, Deletion, DeletionCause } from "./context.js";
export type { Value, Param, TaggedValue, Row, RawRows } from "./storage.js";
export { real } from "./storage.js";
export type { SocketId } from "./sockets.js";
export { SqlError, SocketError, CallError, type SqlErrorCode, type CallErrorCode } from "./errors.js";
export { Request, text, json, notKept, type Response, type ResponseLike, type ResponseInit, type Responder, type HeadersInit } from "./http.js";
export { defineActor, isActorDefinition, type ActorHandlers, type ActorDefinition } from "./actor.js";

/** The version of this SDK (the npm package version). */
export const VERSION = "0.2.0";

/** The WIT package the SDK is built on. */
export const WIT_PACKAGE = "wasmkeep:actor@0.2.4";
export { decodeUtf8 as decodeText, encodeUtf8 as encodeText } from "./utf8.js";
