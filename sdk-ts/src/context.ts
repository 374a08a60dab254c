/**
 * Who the actor is, and the host's clock and log.
 * @module
 */
import * as wit from "wasmkeep:actor/context@0.2.4";
import { describeThrown, inEvent, printError, requireEvent } from "./event.js";

/** An actor's address inside its app. */
export interface Address {
  /** The class, e.g. `"counter"`. */
  class: string;
  /** The actor's name, e.g. `"visits"`. */
  name: string;
}

/** Severity of a log line. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** This actor's address. */
export function self(): Address {
  requireEvent("context.self");
  const a = wit.selfAddress();
  return { class: a.class, name: a.name };
}

/** The app this actor belongs to, as `tenant/app`. */
export function app(): string {
  requireEvent("context.app");
  return wit.app();
}

/** The host's time in milliseconds since the Unix epoch (virtual under a test host). */
export function now(): number {
  requireEvent("context.now");
  return Number(wit.now());
}

/** How an earlier incarnation of this address was deleted. */
export type DeletionCause = "delete-self" | "delete-self-durable" | "operator" | "expired";

/** A deletion of this address that took effect. */
export interface Deletion {
  /** When it took effect (the host's clock). */
  at: Date;
  /** Who or what deleted it. */
  cause: DeletionCause;
}

/**
 * The last deletion of this address before its current database was created,
 * or `null` if the host holds no such record (the address was never deleted).
 * Read from the marker the deletion left (positive evidence): a late write for
 * a deleted actor, such as a webhook for a closed account, can refuse to
 * recreate state. Since WIT `wasmkeep:actor@0.2.1`.
 *
 * ```ts
 * const gone = context.previousDeletion();
 * if (gone) return json({ error: `deleted at ${gone.at.toISOString()}` }, { status: 410 });
 * ```
 */
export function previousDeletion(): Deletion | null {
  requireEvent("context.previousDeletion");
  const d = wit.previousDeletion();
  if (d == null) return null;
  return { at: new Date(Number(d.at)), cause: d.cause };
}

/**
 * Writes a line to the host's log, tagged with the actor's address. An
 * `Error` is written as `name: message` and its stack. Outside an event (at
 * module scope) there is no host to log to: the line goes to stderr.
 */
export function log(level: LogLevel, ...parts: unknown[]): void {
  const line = parts.map((p) => (typeof p === "string" ? p : safeString(p))).join(" ");
  if (inEvent()) wit.log(level, line);
  else printError(`${level}: ${line}`);
}

function safeString(v: unknown): string {
  if (v instanceof Error) return describeThrown(v);
  try {
    return typeof v === "object" ? JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x)) : String(v);
  } catch {
    return String(v);
  }
}

/** The host's log, by level: `logger.info("saved", id)`. */
export const logger = {
  debug: (...parts: unknown[]) => log("debug", ...parts),
  info: (...parts: unknown[]) => log("info", ...parts),
  warn: (...parts: unknown[]) => log("warn", ...parts),
  error: (...parts: unknown[]) => log("error", ...parts),
};
