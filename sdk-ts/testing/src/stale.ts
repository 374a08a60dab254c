// Tests never run a stale component. A class's sources and build command
// come from, in order: the class's own `sources` and `build`; the
// wasmkeep.toml that names its component with a `build` (its `watch` paths,
// default the manifest's directory, the one file `wasmkeep-shim serve` and
// `serve --watch` use); the package.json whose `build` script runs
// `wasmkeep-build <entry> -o <the component>` (the entry's directory, built
// with `npm run build`). When a source is newer than the component (or the
// component is missing), the build command runs (wasmkeep-build's
// content-hash cache makes an unchanged bundle quick); with
// staleComponents: "fail", or no build command known, the host refuses to
// start, saying which command builds it. Nothing known: no check.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** {@link TestHostOptions.staleComponents}. */
export type StaleMode = "build" | "fail" | "ignore";

/** What a component is built from, and how. */
export interface Sources {
  paths: string[];
  build: string | undefined;
  cwd: string;
  /** Where this was read from, as messages say it. */
  via: string;
}

/** A class's `[classes.<name>]` table, with the string and string-array values this check reads. */
type ManifestClass = Record<string, string | string[] | undefined>;

/** What serve --watch ignores, and tests (which are not the actor's sources). */
const NOT_SOURCES = new Set([".git", ".wasmkeep", "target", "node_modules", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache", "test", "tests", "__tests__"]);

function findUp(start: string, name: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
    if (dirname(dir) === dir) return undefined;
  }
}

/** `# comment` removed, outside strings. */
function stripTomlComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "#") return line.slice(0, i);
  }
  return line;
}

function tomlStrings(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((m) => (m[1] !== undefined ? (JSON.parse(`"${m[1]}"`) as string) : m[2]));
}

/**
 * The `[classes.<name>]` tables of a wasmkeep.toml, with their string and
 * string-array values (all this check reads); undefined when it cannot be read.
 */
export function manifestClasses(path: string): Record<string, ManifestClass> | undefined {
  try {
    const lines = readFileSync(path, "utf8").split(/\r?\n/);
    const classes: Record<string, ManifestClass> = {};
    let current: ManifestClass | undefined;
    for (let i = 0; i < lines.length; i++) {
      const line = stripTomlComment(lines[i]).trim();
      if (!line) continue;
      const table = /^\[\s*classes\s*\.\s*(?:"([^"]+)"|([A-Za-z0-9_-]+))\s*\]$/.exec(line);
      if (table) {
        current = classes[table[1] ?? table[2]] = {};
        continue;
      }
      if (line.startsWith("[")) {
        current = undefined;
        continue;
      }
      const kv = /^([A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line);
      if (!kv || !current) continue;
      let value = kv[2];
      if (value.startsWith("[")) {
        while (!value.includes("]") && i + 1 < lines.length) value += ` ${stripTomlComment(lines[++i])}`;
        current[kv[1]] = tomlStrings(value);
      } else if (value.startsWith('"') || value.startsWith("'")) {
        current[kv[1]] = tomlStrings(value)[0];
      }
    }
    return classes;
  } catch {
    return undefined;
  }
}

/** What a class's options say it is built from. */
export interface SourcesInit {
  sources?: string | string[];
  build?: string;
}

/** `{paths, build, cwd, via}` for the component, or undefined when nothing says what its sources are. */
export function sourcesOf(component: string, init: SourcesInit, manifest?: string): Sources | undefined {
  if (init.sources !== undefined || init.build !== undefined) {
    const list = init.sources === undefined ? [] : Array.isArray(init.sources) ? init.sources : [init.sources];
    return { paths: list.map((p) => resolve(p)), build: init.build, cwd: process.cwd(), via: "the class's options" };
  }
  const manifests = [manifest, findUp(dirname(component), "wasmkeep.toml"), findUp(process.cwd(), "wasmkeep.toml")];
  for (const m of manifests) {
    if (!m) continue;
    const base = dirname(m);
    for (const c of Object.values(manifestClasses(m) ?? {})) {
      if (typeof c.component !== "string" || resolve(base, c.component) !== component || typeof c.build !== "string") continue;
      const watch = Array.isArray(c.watch) ? c.watch.map((w) => resolve(base, w)) : [base];
      return { paths: watch, build: c.build, cwd: base, via: shown(m) };
    }
  }
  const pkgPath = findUp(dirname(component), "package.json");
  if (!pkgPath) return undefined;
  let pkg: { scripts?: { build?: unknown } } | undefined;
  try {
    pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  } catch {
    return undefined;
  }
  const script = pkg?.scripts?.build;
  const m = typeof script === "string" ? /wasmkeep-build\s+(\S+)(?:\s+\S+)*?\s+(?:-o|--out)\s+(\S+)/.exec(script) : null;
  if (!m) return undefined;
  const base = dirname(pkgPath);
  if (resolve(base, m[2]) !== component) return undefined;
  const entryDir = dirname(resolve(base, m[1]));
  return { paths: [entryDir === base ? resolve(base, m[1]) : entryDir], build: "npm run build --silent", cwd: base, via: shown(pkgPath) };
}

/** The newest file under `paths` (not the component itself): `{path, mtimeMs}`. */
function newestSource(paths: string[], component: string): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  const visit = (p: string, top: boolean): void => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      const name = p.split(/[\\/]/).pop() ?? "";
      if (!top && NOT_SOURCES.has(name)) return;
      for (const n of readdirSync(p)) visit(join(p, n), false);
    } else if (p !== component && !p.endsWith(".wasm") && (!newest || st.mtimeMs > newest.mtimeMs)) {
      newest = { path: p, mtimeMs: st.mtimeMs };
    }
  };
  for (const p of paths) visit(p, true);
  return newest;
}

/** A path as messages show it: relative to the working directory when under it. */
function shown(p: string): string {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith("..") ? r : p;
}

/**
 * Builds class `cls`'s component when it is older than its sources (or
 * missing), or refuses (`"fail"`, or no build command known).
 */
export function ensureFresh(cls: string, component: string, sources: Sources | undefined, mode: StaleMode): void {
  if (mode === "ignore" || !sources) return;
  /** The newer source (`path` undefined: the component is missing), or undefined when it is fresh. */
  const stale = (): { path: string | undefined } | undefined => {
    const built = existsSync(component) ? statSync(component).mtimeMs : -Infinity;
    const src = newestSource(sources.paths, component);
    return src && src.mtimeMs > built ? src : built === -Infinity ? { path: undefined } : undefined;
  };
  const before = stale();
  if (!before) return;
  const why = existsSync(component)
    ? `the component ${shown(component)} is older than its sources (${shown(before.path ?? component)} changed since it was built)`
    : `the component ${shown(component)} does not exist`;
  const where = sources.cwd === process.cwd() ? "" : ` in ${shown(sources.cwd)}`;
  if (!sources.build || mode === "fail") {
    const command = sources.build ? `\`${sources.build}\`${where}` : `\`npx wasmkeep-build <your entry, e.g. src/actor.ts> -o ${shown(component)}\``;
    throw new Error(`class ${cls}: ${why}: build it with ${command} before testing, so that the tests run the actor as it is now`);
  }
  process.stderr.write(`@wasmkeep/actor/testing: class ${cls}: ${why}: building it with \`${sources.build}\`${where} (from ${sources.via})\n`);
  // The build's output goes to stderr: a test runner reads stdout.
  const r = spawnSync(sources.build, { cwd: sources.cwd, shell: true, stdio: ["ignore", 2, 2] });
  if (r.status !== 0) {
    throw new Error(
      `class ${cls}: building ${shown(component)} with \`${sources.build}\`${where} failed (${r.error?.message ?? r.status ?? r.signal}); its output is above: fix what it says, or build it yourself before testing`,
    );
  }
  const after = stale();
  if (after) {
    throw new Error(
      `class ${cls}: \`${sources.build}\`${where} ran, but ${after.path ? `${shown(component)} is still older than ${shown(after.path)}` : `${shown(component)} still does not exist`}: make the build command write that file (the class's component), or point the test at the file it writes`,
    );
  }
}
