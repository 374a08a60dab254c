// The admin API as the page calls it. Every call is same-origin; POST and
// DELETE say application/json (the API refuses them otherwise), and with
// `serve --admin-token` each carries the token the user typed.

let token = sessionStorage.getItem("wasmkeep-admin-token") || "";

export function setToken(t) {
  token = t;
  sessionStorage.setItem("wasmkeep-admin-token", t);
}

function headers(json) {
  const h = {};
  if (json) h["content-type"] = "application/json";
  if (token) h.authorization = `Bearer ${token}`;
  return h;
}

/** An actor's path segment, encoded. */
export function actorPath(cls, name) {
  return `${encodeURIComponent(cls)}/${encodeURIComponent(name)}`;
}

/**
 * Calls the API: {ok, status, kind, body}. `kind` is the failure's kind
 * (`wasmkeep-failure`), which the page shows beside the message.
 */
export async function api(method, path, body) {
  const write = method !== "GET";
  const r = await fetch(path, {
    method,
    headers: headers(write),
    body: write ? JSON.stringify(body ?? {}) : undefined,
  });
  let parsed = null;
  const text = await r.text();
  try { parsed = JSON.parse(text); } catch { parsed = text; }
  return { ok: r.ok, status: r.status, kind: r.headers.get("wasmkeep-failure") || parsed?.kind || null, body: parsed };
}

/** A request to an actor itself (not the admin API): {status, kind, text}. */
export async function toActor(method, cls, name, path, body) {
  const r = await fetch(`/${actorPath(cls, name)}${path.startsWith("/") ? path : "/" + path}`, {
    method,
    body: method === "GET" || method === "HEAD" ? undefined : body,
  });
  return { status: r.status, kind: r.headers.get("wasmkeep-failure"), text: await r.text() };
}

/**
 * Reads the server-sent events at `path`, calling `onEvent(name, data)`.
 * fetch rather than EventSource, so that a token can go in a header.
 * Resolves when the stream ends; rejects when it cannot be opened.
 */
export async function readEvents(path, onEvent, onOpen) {
  const r = await fetch(path, { headers: { ...headers(false), accept: "text/event-stream" } });
  if (!r.ok) throw Object.assign(new Error(`events: ${r.status}`), { status: r.status });
  onOpen?.();
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}
