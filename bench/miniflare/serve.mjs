// Serves worker.js in Miniflare on 127.0.0.1 and prints `PORT <n>` once it
// listens. The Durable Object bindings and which classes are SQLite-backed
// come from wrangler.json (its `new_sqlite_classes` migrations), as wrangler
// would set them.
//
//   node serve.mjs [--port N] [--persist DIR]
//
// --port 0 (the default) picks a free port. --persist keeps the objects'
// SQLite files in DIR (on disk, as the shim does); without it they are in memory.
// Runs until stdin closes or SIGTERM/SIGINT.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const port = Number(arg("--port", "0"));
const persist = arg("--persist", undefined);

const config = JSON.parse(readFileSync(join(here, "wrangler.json"), "utf8"));
const sqliteClasses = new Set(config.migrations.flatMap((m) => m.new_sqlite_classes ?? []));
const durableObjects = Object.fromEntries(
  config.durable_objects.bindings.map((b) => [
    b.name,
    { className: b.class_name, useSQLite: sqliteClasses.has(b.class_name) },
  ]),
);

const mf = new Miniflare({
  modules: true,
  scriptPath: join(here, config.main),
  compatibilityDate: config.compatibility_date,
  durableObjects,
  durableObjectsPersist: persist ?? false,
  host: "127.0.0.1",
  port,
  log: undefined,
});
const url = await mf.ready;
console.log(`PORT ${url.port}`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await mf.dispose();
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
