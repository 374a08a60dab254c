// The counter of examples/counter-rust as a SQLite-backed Durable Object, for
// the wasmkeep benchmark. Routes like the shim's dev server: /<class>/<name>,
// one object per name. GET reads the count, POST adds one.
import { DurableObject } from "cloudflare:workers";

export class Counter extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    // The shim's on-init: create the table and its one row (once per database).
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS counter(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)",
    );
    this.sql.exec("INSERT OR IGNORE INTO counter VALUES (1, 0)");
  }

  count() {
    return this.sql.exec("SELECT n FROM counter WHERE id = 1").one().n;
  }

  async fetch(request) {
    switch (request.method) {
      case "GET":
        return new Response(String(this.count()));
      case "POST":
        this.sql.exec("UPDATE counter SET n = n + 1 WHERE id = 1");
        return new Response(String(this.count()));
      default:
        return new Response("use GET or POST", { status: 405 });
    }
  }
}

export default {
  async fetch(request, env) {
    const [cls, name] = new URL(request.url).pathname.split("/").filter(Boolean);
    if (cls !== "counter" || !name) {
      return new Response("actors are at /counter/<name>", { status: 404 });
    }
    return env.COUNTER.get(env.COUNTER.idFromName(name)).fetch(request);
  },
};
