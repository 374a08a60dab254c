/**
 * Not public API: a `console` for engines that have none. QuickJS (jco's
 * componentize-qjs runtime) defines no `console` at all, so an actor's
 * `console.log(...)` would throw `ReferenceError`. This one sends each call
 * to the host's log (`context.log`), tagged with the actor as every log line
 * is: `log` and `info` at info, `debug`/`trace` at debug, `warn` at warn,
 * `error` at error. Outside an event (at module scope, which runs at build
 * time) there is no host to write to, and the line is dropped.
 *
 * StarlingMonkey has its own console, which writes to the guest's output;
 * it is left alone.
 * @module
 */
import * as wit from "wasmkeep:actor/context@0.2.4";
import { describeThrown, inEvent } from "./event.js";

type Level = "debug" | "info" | "warn" | "error";

function text(v: unknown): string {
  if (typeof v === "string") return v;
  if (v instanceof Error) return describeThrown(v);
  try {
    return typeof v === "object" && v !== null ? JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x)) : String(v);
  } catch {
    return String(v);
  }
}

function writer(level: Level): (...parts: unknown[]) => void {
  return (...parts) => {
    if (!inEvent()) return;
    try {
      wit.log(level, parts.map(text).join(" "));
    } catch {
      // A log line must never fail the actor.
    }
  };
}

// Installed when this module loads: wasmkeep-build imports it before the actor's module.
if ((globalThis as { console?: unknown }).console === undefined) {
  (globalThis as { console?: unknown }).console = {
    log: writer("info"),
    info: writer("info"),
    debug: writer("debug"),
    trace: writer("debug"),
    warn: writer("warn"),
    error: writer("error"),
  };
}
