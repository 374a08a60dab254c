/**
 * One alarm per actor: an `onAlarm` event at or after a time. Times are
 * milliseconds since the Unix epoch on the host's clock (virtual under the
 * test harness): compute them from {@link now}, not `Date.now()`.
 * @module
 */
import * as wit from "wasmkeep:actor/alarms@0.2.4";
import * as ctx from "wasmkeep:actor/context@0.2.4";
import { int64 } from "./abi.js";
import { requireEvent } from "./event.js";

/**
 * The pending alarm's time, or `null`. `null` after `deleteSelfDurable()`
 * succeeded in this event.
 */
export function getAlarm(): Date | null {
  requireEvent("getAlarm");
  const at = wit.getAlarm();
  return at === undefined || at === null ? null : new Date(Number(at));
}

/**
 * Sets (or moves) the alarm to fire once, at or after `at` (a `Date` or
 * milliseconds since the epoch). Never fires after the actor was deleted.
 */
export function setAlarm(at: Date | number): void {
  requireEvent("setAlarm");
  const ms = typeof at === "number" ? at : at.getTime();
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`setAlarm: invalid time ${String(at)}`);
  wit.setAlarm(int64(Math.floor(ms), "setAlarm: time"));
}

/** Sets the alarm `ms` milliseconds from the host's {@link now}. */
export function setAlarmIn(ms: number): void {
  requireEvent("setAlarmIn");
  setAlarm(Number(ctx.now()) + Math.max(0, ms));
}

/** Clears the pending alarm, if any. */
export function clearAlarm(): void {
  requireEvent("clearAlarm");
  wit.clearAlarm();
}

/** The host's time in milliseconds since the epoch (the clock alarms run on). */
export function now(): number {
  requireEvent("now");
  return Number(ctx.now());
}
