/**
 * Who the actor is, and the host's clock and log.
 * @module
 */
import * as wit from "wasmkeep:actor/context@0.2.0";

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
  const a = wit.selfAddress();
  return { class: a.class, name: a.name };
}

/** The app this actor belongs to, as `tenant/app`. */
export function app(): string {
  return wit.app();
}

/** The host's time in milliseconds since the Unix epoch (virtual under a test host). */
export function now(): number {
  return Number(wit.now());
}

/** Writes a line to the host's log, tagged with the actor's address. */
export function log(level: LogLevel, ...parts: unknown[]): void {
  wit.log(level, parts.map((p) => (typeof p === "string" ? p : safeString(p))).join(" "));
}

function safeString(v: unknown): string {
  if (v instanceof Error) return v.stack ?? `${v.name}: ${v.message}`;
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
