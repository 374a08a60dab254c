// Seeded chaos: the host testing library's chaos loop (the one every
// language's harness runs), with the test's body called once per seed.
import { TestHost } from "./host.js";
import { kLogSink } from "./native.js";
import type { ChaosOptions, ChaosRecord } from "./types.js";

/**
 * The seed under which a {@link runChaos} body failed. Its `message` is the
 * host library's report: the seed, `WASMKEEP_CHAOS_SEED=<seed>` to replay
 * it alone, the body's error message, and the schedule, one step a line.
 */
export class ChaosFailure extends Error {
  declare readonly name: "ChaosFailure";
  /** `WASMKEEP_CHAOS_SEED=<seed>` (or `seeds: [seed]`) replays exactly this run. */
  readonly seed: number;
  /** What the schedule did before each event, in order. */
  readonly schedule: ChaosRecord[];
  /** What the body threw. */
  declare readonly cause: unknown;
  /** What the harness would have printed under this seed (the logs of requests answering 500 or more). */
  readonly logs: string;
  /** @internal */
  constructor(report: string, { seed, schedule, cause, logs }: { seed: number; schedule: ChaosRecord[]; cause: unknown; logs: string }) {
    super(report, { cause });
    this.name = "ChaosFailure";
    this.seed = seed;
    this.schedule = schedule;
    this.logs = logs;
  }
}

function seedsOf(seeds: ChaosOptions["seeds"]): number[] {
  if (seeds === undefined) return Array.from({ length: 100 }, (_, i) => i);
  if (typeof seeds === "number") {
    if (!Number.isSafeInteger(seeds) || seeds < 0) throw new RangeError(`runChaos: seeds: ${seeds}: give a count (0, 1, 2, …) or a list of seeds`);
    return Array.from({ length: seeds }, (_, i) => i);
  }
  if (seeds && typeof seeds[Symbol.iterator] === "function") return Array.from(seeds);
  throw new TypeError(`runChaos: seeds: ${String(seeds)}: give a count (0, 1, 2, …) or a list of seeds`);
}

/**
 * Seeded chaos: runs `body` once per seed, each time after `host.reset()`
 * and under that seed's schedule of what goes wrong at the durable
 * boundaries before each request, call and socket opening: a failed removal
 * (a `deleteSelfDurable` answering `internal`), an actor restarted, every
 * actor hibernated, the clock moved on and the due alarms run late; in a
 * cluster also a failed upload, an upload that lands but reports failure, a
 * lost hold, a node cut off, and the event sent to any live node. The draws
 * depend on the seed and the events' order only, so one seed replays the
 * same schedule, and exactly the same answers, on one node and on several,
 * as long as the body decides only from its seed (the host runs a step that
 * touches several actors one after another, and lets every queued event run
 * before it arms a fault).
 *
 * The body is synchronous and throws (an assertion) when its invariant
 * breaks; the first failing seed throws a {@link ChaosFailure}. With
 * `WASMKEEP_CHAOS_SEED` set only that seed runs. The host is never left in
 * chaos mode, whether runChaos returns or throws (its state is that of the
 * last seed run). Returns how many seeds ran.
 *
 * ```ts
 * const host = createTestHost({ classes: { counter: "counter.wasm" } });
 * runChaos(host, { seeds: 1000 }, (host) => {
 *   const c = host.actor("counter", "c");
 *   c.post();
 *   while (c.delete().status !== 200); // "internal" (500): retry
 *   assert.equal(c.get().text(), "0");
 * });
 * ```
 * @throws {ChaosFailure} the body failed under a seed
 */
export function runChaos(host: TestHost, options: ChaosOptions, body: (host: TestHost, seed: number) => void): number;
export function runChaos(host: TestHost, body: (host: TestHost, seed: number) => void): number;
export function runChaos(
  host: TestHost,
  optionsOrBody: ChaosOptions | ((host: TestHost, seed: number) => void),
  maybeBody?: (host: TestHost, seed: number) => void,
): number {
  const [options, body] = typeof optionsOrBody === "function" ? [{}, optionsOrBody] : [optionsOrBody, maybeBody];
  if (!(host instanceof TestHost)) throw new TypeError("runChaos(host, options, body): host is a TestHost (createTestHost(...))");
  if (typeof body !== "function") throw new TypeError("runChaos(host, options, body): body is a function (host, seed) => { ... }");
  // WASMKEEP_CHAOS_SEED is read once, by the native loop: a replayed seed
  // runs alone there, whatever `seeds` says.
  const seeds = seedsOf(options?.seeds);
  let refused: TypeError | undefined;
  // The native loop resets the host, runs the seed's schedule around the
  // body and ends it, whatever the body does; a throw fails the seed.
  const run = host.native.runChaos(seeds, (seed) => {
    const outcome: unknown = body(host, seed);
    if (outcome && typeof (outcome as { then?: unknown }).then === "function") {
      refused = new TypeError("runChaos: the body returned a promise: it must be synchronous (every verb of the test host is)");
      throw refused;
    }
  });
  if (!run.failure) return run.ran;
  if (refused !== undefined && run.cause === refused) throw refused;
  const { seed, report, records, explanations } = run.failure;
  // What explained the seed's 5xx answers (kept by the host library while
  // it ran: under chaos they are expected) is shown for the seed that fails.
  for (const text of explanations) host[kLogSink](text);
  throw new ChaosFailure(report, { seed, schedule: records, cause: run.cause, logs: explanations.join("") });
}
