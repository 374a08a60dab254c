/**
 * Not public API: how WIT 64-bit integers (`u64`, `s64`) cross the component
 * boundary with each engine. StarlingMonkey (jco) uses `bigint`; QuickJS
 * (componentize-qjs) uses `number`, exact only within ±2^53 (SQL integers go
 * through the QuickJS storage dialect instead: src/storage.ts). `wasmkeep-build`
 * defines `__WASMKEEP_BACKEND__` when it bundles; without it (tests, other
 * bundlers) the StarlingMonkey convention applies.
 * @module
 */
declare const __WASMKEEP_BACKEND__: string | undefined;

/** True when 64-bit integers cross as `number` (QuickJS). */
export const INT64_AS_NUMBER: boolean = typeof __WASMKEEP_BACKEND__ !== "undefined" && __WASMKEEP_BACKEND__ === "quickjs";

/**
 * A 64-bit integer in the form the engine's bindings take. Typed as `bigint`
 * (the generated WIT types); a `number` under QuickJS.
 * @throws {RangeError} under QuickJS, for an integer beyond ±2^53.
 */
export function int64(v: number | bigint, what = "integer"): bigint {
  if (!INT64_AS_NUMBER) return typeof v === "bigint" ? v : BigInt(v);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || (typeof v === "bigint" && BigInt(n) !== v)) {
    throw new RangeError(`${what} ${String(v)} is beyond ±2^53: QuickJS passes this 64-bit value as a JavaScript number, which cannot hold it exactly (SQL integers of any size are fine: the SDK sends those as text; build with --backend starlingmonkey for the rest)`);
  }
  return n as unknown as bigint;
}
