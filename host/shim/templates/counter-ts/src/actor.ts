// A counter actor: GET reads the count, POST adds one, DELETE deletes the
// actor (the next request meets a new counter at 0).
//
// Copy this directory to start a new wasmkeep actor in TypeScript.
import { SqlError, defineActor, notKept, storage, text } from "@wasmkeep/actor";

/** The current count. */
function count(): number {
  const [row] = storage.query<{ n: number }>("SELECT n FROM counter WHERE id = 1");
  return row!.n;
}

export default defineActor({
  // Runs once per new database: create the table and its one row.
  onInit() {
    storage.exec(`
      CREATE TABLE counter(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
      INSERT INTO counter VALUES (1, 0);
    `);
  },

  onRequest(request) {
    switch (request.method) {
      case "GET":
        return text(String(count()));
      case "POST":
        storage.exec("UPDATE counter SET n = n + 1 WHERE id = 1");
        return text(String(count()));
      case "DELETE":
        // Durable before the answer: a 200 means the counter is gone.
        try {
          storage.deleteSelfDurable();
        } catch (err) {
          // "internal": not known to be durable; the client may retry (503, retry-after).
          if (err instanceof SqlError && err.code === "internal") return notKept(err);
          if (err instanceof SqlError) return text(`${err.code}: ${err.message}`, 500);
          throw err;
        }
        return text("deleted");
      default:
        return text("use GET, POST or DELETE", 405);
    }
  },
});
