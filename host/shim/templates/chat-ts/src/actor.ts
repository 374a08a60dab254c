// A chat room actor, addressed as /chat/<room>. Clients join with a WebSocket
// on /chat/<room>/?name=<nickname>; every text message is stored in the room's
// history and broadcast to the room's open sockets as JSON.
//
// To the client, all JSON:
//   {"type":"history","messages":[...]}      on joining: the latest messages
//   {"type":"message","id","at","name","text"}  every message, to everyone (the sender too)
//   {"type":"join","name"} / {"type":"leave","name"}  to the others
//   {"type":"error","error"}                 to the sender only
import { Request, SocketError, context, defineActor, json, sockets, storage, text, type SocketId } from "@wasmkeep/actor";

/** Messages kept per room (older ones are dropped). */
const KEEP = 100;
/** Messages sent to a joining client. */
const HISTORY_ON_JOIN = 50;
/** The longest message accepted, in characters. */
const MAX_TEXT = 2000;

export interface ChatMessage {
  id: number;
  at: number;
  name: string;
  text: string;
}

function history(limit: number): ChatMessage[] {
  // The newest `limit`, oldest first.
  return storage
    .query<ChatMessage>("SELECT id, at, name, text FROM messages ORDER BY id DESC LIMIT ?", limit)
    .reverse();
}

function memberName(socket: SocketId): string | undefined {
  return storage.query<{ name: string }>("SELECT name FROM members WHERE socket = ?", socket)[0]?.name;
}

/** Stores a message, trims the history and sends it to every open socket. */
function post(name: string, body: string): ChatMessage {
  const at = context.now();
  const message = storage.transaction(() => {
    storage.exec("INSERT INTO messages(at, name, text) VALUES (?, ?, ?)", at, name, body);
    const [row] = storage.query<{ id: number }>("SELECT last_insert_rowid() AS id");
    storage.exec("DELETE FROM messages WHERE id <= ?", row!.id - KEEP);
    return { id: row!.id, at, name, text: body };
  });
  sockets.broadcast(JSON.stringify({ type: "message", ...message }));
  return message;
}

function sendTo(socket: SocketId, value: unknown): void {
  try {
    sockets.send(socket, JSON.stringify(value));
  } catch (err) {
    if (!(err instanceof SocketError)) throw err;
  }
}

/** The nickname the client asked for in the socket's path (`?name=alice`), else `guest-<id>`. */
function nicknameOf(path: string, socket: SocketId): string {
  const name = (new Request("GET", path).query["name"] ?? "").trim().slice(0, 40);
  return name || `guest-${socket}`;
}

export default defineActor({
  onInit() {
    storage.exec(`
      CREATE TABLE messages(id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, name TEXT NOT NULL, text TEXT NOT NULL);
      CREATE TABLE members(socket INTEGER PRIMARY KEY, name TEXT NOT NULL);
    `);
  },

  onSocketOpen(socket, path) {
    // Members whose sockets the host no longer has (e.g. after a restart) are forgotten.
    const open = new Set(sockets.open());
    for (const m of storage.query<{ socket: number }>("SELECT socket FROM members")) {
      if (!open.has(m.socket)) storage.exec("DELETE FROM members WHERE socket = ?", m.socket);
    }
    const name = nicknameOf(path, socket);
    storage.exec("INSERT OR REPLACE INTO members(socket, name) VALUES (?, ?)", socket, name);
    sendTo(socket, { type: "history", messages: history(HISTORY_ON_JOIN) });
    sockets.broadcast(JSON.stringify({ type: "join", name }), socket);
  },

  onSocketMessage(socket, message) {
    if (typeof message !== "string") return sendTo(socket, { type: "error", error: "send text" });
    const body = message.trim();
    if (!body) return sendTo(socket, { type: "error", error: "empty message" });
    if (body.length > MAX_TEXT) return sendTo(socket, { type: "error", error: `longer than ${MAX_TEXT} characters` });
    post(memberName(socket) ?? `guest-${socket}`, body);
  },

  onSocketClose(socket) {
    const name = memberName(socket);
    if (name === undefined) return;
    storage.exec("DELETE FROM members WHERE socket = ?", socket);
    sockets.broadcast(JSON.stringify({ type: "leave", name }), socket);
  },

  onRequest(request) {
    const route = `${request.method} ${request.pathname.replace(/\/+$/, "") || "/"}`;
    switch (route) {
      case "GET /":
        return json({
          members: storage.query<{ name: string }>("SELECT name FROM members ORDER BY socket").map((m) => m.name),
          messages: storage.query<{ n: number }>("SELECT count(*) AS n FROM messages")[0]!.n,
        });
      case "GET /history": {
        const limit = Math.min(KEEP, Math.max(1, Number(request.query["limit"] ?? HISTORY_ON_JOIN) || HISTORY_ON_JOIN));
        return json(history(limit));
      }
      case "POST /messages": {
        // A message from HTTP (a bot, a webhook): ?name=... and the text as the body.
        const body = request.text().trim();
        if (!body || body.length > MAX_TEXT) return text(`the body must be 1 to ${MAX_TEXT} characters`, 400);
        return json(post((request.query["name"] ?? "").trim() || "http", body), 201);
      }
      case "DELETE /":
        // Closes every socket (1000 "actor deleted") and forgets the history.
        storage.deleteSelfDurable();
        return text("deleted");
      default:
        return text("GET /, GET /history, POST /messages, DELETE /, or a WebSocket", 404);
    }
  },
});
