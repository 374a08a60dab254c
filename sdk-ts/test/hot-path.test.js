// The SDK's hot-path guest (bench/hot-path.ts), which `wasmkeep-bench --only
// ts-sdk` reads, still answers a line per piece on each engine: a change of
// the SDK's API that breaks it shows here, not in the next benchmark.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestHost } from "@wasmkeep/actor/testing";

const components = join(fileURLToPath(new URL("..", import.meta.url)), "..", "target", "components");
const GUESTS = { quickjs: "sdk-ts-hot-path.wasm", starlingmonkey: "sdk-ts-hot-path-starlingmonkey.wasm" };

for (const [engine, file] of Object.entries(GUESTS)) describe(engine, () => {
  let host;
  before(() => {
    host = createTestHost({ classes: { hot: join(components, file) } });
  });
  after(() => host.close());

  test("it answers `µs<TAB>piece` per line, a storage call beside the bindings' own", () => {
    const r = host.actor("hot", "path").fetch("/?calls=10");
    assert.equal(r.status, 200, r.text());
    const lines = r.text().trimEnd().split("\n").map((l) => l.split("\t"));
    assert.ok(lines.length >= 10, r.text());
    for (const [us, name] of lines) {
      assert.ok(Number.isFinite(Number(us)) && Number(us) >= 0, `${name}: ${us}`);
    }
    const names = lines.map(([, name]) => name);
    assert.ok(names.includes("storage.flush()") && names.includes("the bindings' flush()"), names.join("\n"));
  });
});
