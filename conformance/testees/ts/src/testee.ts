// The TypeScript conformance testee (see conformance/PROTOCOL.md): runs the
// operations a request lists through the SDK's public API and answers each
// outcome. It holds no test logic.
import {
  CallError,
  SocketError,
  SqlError,
  calls,
  clearAlarm,
  context,
  decodeText,
  defineActor,
  getAlarm,
  json,
  setAlarm,
  sockets,
  storage,
  type Responder,
  type TaggedValue,
} from "@wasmkeep/actor";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Op = { [k: string]: Json };

/** A malformed operation. */
class BadOp extends Error {}

export default defineActor({
  onInit() {
    storage.exec("CREATE TABLE IF NOT EXISTS init_log(n INTEGER)");
    storage.exec("INSERT INTO init_log(n) VALUES ((SELECT count(*) FROM init_log) + 1)");
  },

  onRequest(request, responder) {
    let ops: Json[];
    try {
      ops = parseOps(request.body);
    } catch (e) {
      return json({ error: (e as Error).message }, 400);
    }
    const outcomes = runOps(ops, responder);
    // The WIT's own semantics (answer, then the event's end keeps the
    // writes); a case asks for the SDK's kept answer with `respond`'s `kept`.
    if (!responder.sent) responder.sendBeforeKept(json({ outcomes }));
  },

  onAlarm() {
    storage.exec("CREATE TABLE IF NOT EXISTS alarm_log(at TEXT)");
    storage.exec("INSERT INTO alarm_log(at) VALUES (?)", String(context.now()));
  },

  onCall(payload) {
    const outcomes = runOps(parseOps(payload), undefined);
    return canonical({ outcomes });
  },

  onSocketOpen(socket, path) {
    logSocket("open", socket, path);
  },

  onSocketMessage(socket, message) {
    if (typeof message === "string") {
      logSocket("message", socket, message);
      if (message.startsWith("echo:")) {
        try {
          sockets.send(socket, message.slice(5));
        } catch (e) {
          context.log("warn", `echo on socket ${socket}:`, e);
        }
      }
    } else {
      logSocket("message", socket, hex(message));
    }
  },

  onSocketClose(socket, code, reason) {
    logSocket("close", socket, `${code} ${reason}`);
  },
});

function logSocket(event: string, socket: number, detail: string): void {
  try {
    storage.exec("CREATE TABLE IF NOT EXISTS socket_log(event TEXT, socket TEXT, detail TEXT)");
    storage.exec("INSERT INTO socket_log(event, socket, detail) VALUES (?, ?, ?)", event, String(socket), detail);
  } catch (e) {
    context.log("error", "socket_log:", e);
  }
}

function parseOps(body: Uint8Array): Json[] {
  const text = decodeText(body);
  if (text.trim() === "") return [];
  let doc: Json;
  try {
    doc = JSON.parse(text) as Json;
  } catch (e) {
    throw new Error(`invalid JSON: ${(e as Error).message}`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc) || !Array.isArray(doc["ops"])) {
    throw new Error('the body must be an object with an "ops" array');
  }
  return doc["ops"];
}

function runOps(ops: Json[], responder: Responder | undefined): Json[] {
  const outcomes: Json[] = [];
  for (const op of ops) {
    let outcome: Json;
    try {
      outcome = { ok: runOp(op, responder, outcomes) };
    } catch (e) {
      outcome = { err: errorJson(e) };
    }
    outcomes.push(outcome);
  }
  return outcomes;
}

function errorJson(e: unknown): Json {
  if (e instanceof SqlError) {
    return e.code === "sqlite"
      ? { kind: "sqlite", code: e.sqliteCode ?? null, message: e.message }
      : { kind: e.code, message: e.message };
  }
  if (e instanceof SocketError) return { kind: "not-open", message: e.message };
  if (e instanceof CallError) return { kind: e.code, message: e.message };
  if (e instanceof BadOp) return { kind: "bad-op", message: e.message };
  throw e;
}

/** A bookmark, or none, as the protocol answers it. */
function bookmarkJson(b: string | null): Json {
  return b === null ? { none: true } : { bookmark: b };
}

function field(op: Op, name: string): Json {
  if (!(name in op)) throw new BadOp(`missing field "${name}"`);
  return op[name]!;
}

function str(op: Op, name: string): string {
  const v = field(op, name);
  if (typeof v !== "string") throw new BadOp(`"${name}" must be a string`);
  return v;
}

/** A u64 given as a decimal string (or a JSON number). */
function u64(op: Op, name: string): number {
  const v = field(op, name);
  const n = typeof v === "string" && /^\d+$/.test(v) ? Number(v) : typeof v === "number" ? v : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new BadOp(`"${name}" must be a decimal string of a u64`);
  return n;
}

function params(op: Op): TaggedValue[] {
  const p = op["params"];
  if (p === undefined || p === null) return [];
  if (!Array.isArray(p)) throw new BadOp('"params" must be an array');
  return p.map(valueFromJson);
}

function valueFromJson(v: Json): TaggedValue {
  if (v === null || typeof v !== "object" || Array.isArray(v) || Object.keys(v).length !== 1) {
    throw new BadOp(`a value is an object with one key, not ${JSON.stringify(v)}`);
  }
  const [kind, inner] = Object.entries(v)[0]!;
  const invalid = () => new BadOp(`invalid ${kind} value ${JSON.stringify(inner)}`);
  switch (kind) {
    case "null":
      return { tag: "null" };
    case "integer":
      if (typeof inner === "string" && /^-?\d+$/.test(inner)) return { tag: "integer", val: BigInt(inner) };
      if (typeof inner === "number" && Number.isSafeInteger(inner)) return { tag: "integer", val: BigInt(inner) };
      throw invalid();
    case "real":
      if (typeof inner !== "number") throw invalid();
      return { tag: "real", val: inner };
    case "text":
      if (typeof inner !== "string") throw invalid();
      return { tag: "text", val: inner };
    case "blob":
      if (typeof inner !== "string") throw invalid();
      return { tag: "blob", val: unhex(inner) ?? (() => { throw invalid(); })() };
    default:
      throw new BadOp(`unknown value kind "${kind}"`);
  }
}

function valueToJson(v: TaggedValue): Json {
  switch (v.tag) {
    case "null":
      return { null: true };
    case "integer":
      return { integer: v.val.toString() };
    case "real":
      return { real: v.val };
    case "text":
      return { text: v.val };
    case "blob":
      return { blob: hex(v.val) };
  }
}

/** JSON with object keys sorted, as the Rust testee writes it (cases compare call answers as text). */
function canonical(v: Json): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(v[k]!)}`)
    .join(",")}}`;
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function unhex(s: string): Uint8Array | undefined {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) return undefined;
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function runOp(raw: Json, responder: Responder | undefined, soFar: Json[]): Json {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new BadOp("an operation is a JSON object");
  const op = raw;
  const name = str(op, "op");
  switch (name) {
    case "exec":
      return { changed: storage.exec(str(op, "sql"), ...params(op)) };
    case "exec-durable":
      return { changed: storage.execDurable(str(op, "sql"), ...params(op)) };
    case "query": {
      const r = storage.queryRaw(str(op, "sql"), ...params(op));
      return { columns: r.columns, rows: r.rows.map((row) => row.map(valueToJson)) };
    }
    case "flush":
      storage.flush();
      return null;
    case "current-bookmark":
      return bookmarkJson(storage.getCurrentBookmark());
    case "bookmark-for-time":
      return bookmarkJson(storage.getBookmarkForTime(u64(op, "at")));
    case "restore-on-next-session":
      return { undo: storage.onNextSessionRestoreBookmark(str(op, "bookmark")) };
    case "begin":
      storage.begin();
      return null;
    case "commit":
      storage.commit();
      return null;
    case "rollback":
      storage.rollback();
      return null;
    case "delete-self":
      storage.deleteSelf();
      return null;
    case "delete-self-durable":
      storage.deleteSelfDurable();
      return null;
    case "get-alarm": {
      const at = getAlarm();
      return at === null ? { pending: false } : { pending: true, at: String(at.getTime()) };
    }
    case "set-alarm":
      if ("at" in op) setAlarm(u64(op, "at"));
      else if ("in" in op) setAlarm(context.now() + u64(op, "in"));
      else throw new BadOp('set-alarm needs "at" or "in"');
      return null;
    case "clear-alarm":
      clearAlarm();
      return null;
    case "now":
      return { now: String(context.now()) };
    case "previous-deletion": {
      const d = context.previousDeletion();
      return d ? { deleted: true, at: String(d.at.getTime()), cause: d.cause } : { deleted: false };
    }
    case "self": {
      const me = context.self();
      return { class: me.class, name: me.name, app: context.app() };
    }
    case "log":
      context.log("info", str(op, "message"));
      return null;
    case "respond": {
      const s = op["status"];
      if (s !== undefined && s !== null && (typeof s !== "number" || !Number.isInteger(s))) throw new BadOp('"status" must be a number');
      if (!responder || responder.sent) throw new BadOp("respond: no request to answer (already answered, or a call)");
      const answer = json({ outcomes: soFar }, typeof s === "number" ? s : 200);
      if (op["kept"] === true) responder.send(answer);
      else responder.sendBeforeKept(answer);
      return null;
    }
    case "trap":
      throw new Error("trap requested by the conformance case");
    case "loop":
      for (;;) {
        // The host must interrupt this.
      }
    case "alloc": {
      const mb = u64(op, "mb");
      const block = new Uint8Array(mb << 20).fill(1);
      return { bytes: block.length };
    }
    case "call": {
      const answer = calls.callText({ class: str(op, "class"), name: str(op, "name") }, str(op, "payload"));
      return { payload: answer };
    }
    case "sockets":
      return { sockets: sockets.open().map(String) };
    case "send":
      sockets.send(u64(op, "socket"), str(op, "text"));
      return null;
    case "close": {
      const code = field(op, "code");
      if (typeof code !== "number" || !Number.isInteger(code) || code < 0 || code > 65535) throw new BadOp('"code" must be a number');
      sockets.close(u64(op, "socket"), code, str(op, "reason"));
      return null;
    }
    default:
      throw new BadOp(`unknown op "${name}"`);
  }
}
