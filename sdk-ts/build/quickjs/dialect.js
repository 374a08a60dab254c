// Derives the QuickJS dialect of the WIT (generated/wit-quickjs/actor-js.wit)
// from wit/actor.wit; scripts/gen.js writes it (`cargo xtask gen`). QuickJS's
// bindings (componentize-qjs) pass WIT `s64` as a JavaScript number, exact
// only within ±2^53, so an SQL INTEGER beyond that cannot cross
// `wasmkeep:actor/storage` intact. The dialect's storage interface is the real
// one with one more `sql-value` case, `big-integer` (the decimal text of an
// integer beyond ±2^53); a small Rust component (sdk-ts/native/quickjs-storage)
// sits between it and the real storage, and wasmkeep-build composes it with
// every QuickJS actor, so the result imports only `wasmkeep:actor` (ADR 017).
//
// The derivation is textual and strict: every piece of actor.wit it relies on
// must be found exactly once, else it throws naming what changed, so that an
// edit of actor.wit cannot silently produce a wrong dialect.

/** The text of the block that starts with `head` at the start of a line and ends at the next `}` at column `indent`. */
function block(text, head, indent, what) {
  const lines = text.split("\n");
  const starts = lines.flatMap((l, i) => (l.startsWith(head) ? [i] : []));
  if (starts.length !== 1) throw new Error(`actor.wit: expected one line starting with ${JSON.stringify(head)} (${what}), found ${starts.length}`);
  const start = starts[0];
  const close = " ".repeat(indent) + "}";
  const end = lines.findIndex((l, i) => i > start && l === close);
  if (end < 0) throw new Error(`actor.wit: ${what} has no closing ${JSON.stringify(close)}`);
  // The doc comment above the block belongs to it.
  let first = start;
  while (first > 0 && lines[first - 1].trimStart().startsWith("///")) first--;
  return { lines: lines.slice(first, end + 1), body: lines.slice(start + 1, end) };
}

function once(lines, pred, what) {
  const found = lines.flatMap((l, i) => (pred(l) ? [i] : []));
  if (found.length !== 1) throw new Error(`actor.wit: expected exactly one ${what}, found ${found.length}`);
  return found[0];
}

/**
 * The dialect's text for actor.wit's text. Throws (naming the piece) when
 * actor.wit no longer has the shape this relies on.
 */
export function quickjsWit(source) {
  const pkg = /^package wasmkeep:actor@([0-9][^;\s]*);$/m.exec(source);
  if (!pkg) throw new Error("actor.wit: no `package wasmkeep:actor@<version>;` line");
  const version = pkg[1];

  const types = block(source, "interface types {", 0, "interface types");
  const sqlValue = block(types.body.join("\n"), "    variant sql-value {", 4, "variant sql-value");
  const integer = once(sqlValue.lines, (l) => l.trim() === "integer(s64),", "`integer(s64),` case in sql-value");
  const value = [...sqlValue.lines];
  value.splice(
    integer,
    1,
    "        /// An integer within ±2^53 (exact as a JavaScript number).",
    "        integer(s64),",
    "        /// An integer beyond ±2^53, as its decimal text (`-9223372036854775808`).",
    "        big-integer(string),",
  );
  const queryResult = block(types.body.join("\n"), "    record query-result {", 4, "record query-result").lines;

  const storage = block(source, "interface storage {", 0, "interface storage");
  const use = once(storage.lines, (l) => l.trim() === "use types.{sql-value, sql-error, query-result};", "`use types.{sql-value, sql-error, query-result};` in interface storage");
  const iface = [...storage.lines];
  iface.splice(
    use,
    1,
    `    use wasmkeep:actor/types@${version}.{sql-error};`,
    "",
    ...value,
    "",
    ...queryResult,
  );
  // The interface's own doc comment is the real one's; say what differs first.
  const docEnd = iface.findIndex((l) => l.startsWith("interface storage {"));
  iface.splice(
    docEnd,
    0,
    "///",
    "/// QuickJS dialect: `sql-value` has one more case, `big-integer`, for the",
    "/// integers a JavaScript number cannot hold exactly. Everything else is as",
    "/// in `wasmkeep:actor/storage`.",
  );

  const world = block(source, "world actor {", 0, "world actor").body.map((l) => l.trim()).filter((l) => l !== "");
  const items = world.map((l) => {
    const m = /^(import|export) ([a-z][a-z0-9-]*);$/.exec(l);
    if (!m) throw new Error(`actor.wit: world actor has a line this cannot carry over: ${JSON.stringify(l)}`);
    return { kind: m[1], name: m[2] };
  });
  once(items, (i) => i.kind === "import" && i.name === "storage", "`import storage;` in world actor");
  const worldLines = items.map(({ kind, name }) =>
    kind === "import" && name === "storage" ? "    import storage;" : `    ${kind} wasmkeep:actor/${name}@${version};`,
  );

  return [
    "// GENERATED from wit/actor.wit by sdk-ts/scripts/gen.js (`cargo xtask gen`); do not edit.",
    "//",
    "// The QuickJS dialect of wasmkeep:actor: QuickJS passes WIT s64 as a JavaScript",
    "// number, exact only within ±2^53, so storage gets a `big-integer` case for",
    "// the rest. wasmkeep-build composes every QuickJS actor with the adapter",
    "// (sdk-ts/native/quickjs-storage), which implements this storage over the real one:",
    "// the component it writes imports only wasmkeep:actor. See ADR 017.",
    "",
    `package wasmkeep:actor-js@${version};`,
    "",
    ...iface,
    "",
    "/// The world a QuickJS actor is componentized against: wasmkeep:actor's own,",
    "/// with the dialect's storage.",
    "world actor {",
    ...worldLines,
    "}",
    "",
    "/// The adapter: the dialect's storage over the real one.",
    "world storage-adapter {",
    `    import wasmkeep:actor/storage@${version};`,
    "    export storage;",
    "}",
    "",
  ].join("\n");
}
