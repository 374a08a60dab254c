// One actor: its facts, tables (paged, long values cut with a way to see them
// whole), a read-only SQL box, log lines, and the actions. Destructive
// actions ask first.

import { api, actorPath, toActor } from "./api.js";
import { when } from "./actors.js";

const PAGE = 50;
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text != null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

/** Asks the user to confirm; resolves true on yes. */
export function confirmAction(text) {
  const dlg = $("confirm");
  $("confirm-text").textContent = text;
  return new Promise((resolve) => {
    dlg.addEventListener("close", () => resolve(dlg.returnValue === "ok"), { once: true });
    dlg.returnValue = "";
    dlg.showModal();
  });
}

/** What a record of the history means, in words. */
function describe(r) {
  const head = r.head ? " (the head: what the next holder restores)" : "";
  switch (r.kind) {
    case "upload":
      return `the whole database (an upload from before page sets, a restore, or a fork's start)${head}`;
    case "pages":
      return `the pages an event changed, on ${r.parent}${head}`;
    case "fence":
      return `a new holder's copy of what it restored, at its own generation${head}`;
    case "reset":
      return `deleted${r.how ? ` (${r.how})` : ""}${r.deleted_at != null ? ` at ${new Date(r.deleted_at).toISOString()}` : ""}${head}`;
    case "snapshot":
      return "a whole image of the state here: restores begin at it (at a reset, what came before is erased)";
    default:
      return "";
  }
}

function showWhole(text) {
  $("whole-value").textContent = text;
  $("whole").showModal();
}

export class ActorView {
  /** `holderOf(class, name)`: the node holding the actor in a local cluster (the list knows). */
  constructor(holderOf) {
    this.holderOf = holderOf;
    this.actor = null; // {class, name}
    this.table = null;
    this.offset = 0;
    $("run-alarm").onclick = () => this.act("POST", "alarm/run", null, "run its alarm");
    $("hibernate-actor").onclick = () => this.act("POST", "hibernate", null, "hibernate");
    $("operator-delete").onclick = async () => {
      if (!(await confirmAction(`Delete ${this.label()} as an operator? Its data is gone for good (no guest code runs).`))) return;
      const r = await api("DELETE", `/_shim/actors/${this.path()}`);
      this.result(r.ok ? `deleted: ${r.body.deleted}` : `failed: ${r.status} ${r.kind ?? ""} ${r.body?.error ?? ""}`, !r.ok);
      this.refresh();
    };
    $("durable-delete").onclick = async () => {
      if (!(await confirmAction(`Send DELETE / to ${this.label()}? The examples answer it with a durable delete of themselves.`))) return;
      const r = await toActor("DELETE", this.actor.class, this.actor.name, "/");
      this.result(`${r.status}${r.kind ? " " + r.kind : ""}: ${r.text}`, r.status >= 400);
      this.refresh();
    };
    $("request-form").onsubmit = async (e) => {
      e.preventDefault();
      const method = $("req-method").value;
      if (method === "DELETE" && !(await confirmAction(`Send DELETE ${$("req-path").value} to ${this.label()}?`))) return;
      const r = await toActor(method, this.actor.class, this.actor.name, $("req-path").value, $("req-body").value);
      this.result(`${r.status}${r.kind ? " " + r.kind : ""}: ${r.text}`, r.status >= 400);
      this.refresh();
    };
    $("sql-form").onsubmit = (e) => {
      e.preventDefault();
      this.runSql();
    };
  }

  label() {
    return `${this.actor.class}/${this.actor.name}`;
  }

  path() {
    return actorPath(this.actor.class, this.actor.name);
  }

  /** An API call about this actor, asked of the node that holds it. */
  url(what, query = "") {
    const node = this.holderOf(this.actor.class, this.actor.name);
    const params = [query, node ? `node=${encodeURIComponent(node)}` : ""].filter(Boolean).join("&");
    return `/_shim/actors/${this.path()}/${what}${params ? "?" + params : ""}`;
  }

  open(a) {
    this.actor = { class: a.class, name: a.name };
    this.table = null;
    this.offset = 0;
    $("actor-title").textContent = this.label();
    $("action-result").textContent = "";
    $("sql-result").replaceChildren();
    return this.refresh();
  }

  result(text, error) {
    const r = $("action-result");
    r.textContent = text;
    r.className = error ? "result error" : "result";
  }

  async act(method, what, body, label) {
    const r = await api(method, this.url(what), body);
    this.result(r.ok ? `${label}: ${JSON.stringify(r.body)}` : `${label} failed: ${r.status} ${r.kind ?? ""} ${r.body?.error ?? ""}`, !r.ok);
    await this.refresh();
  }

  /** Reads the actor's facts, tables and logs again. */
  async refresh() {
    if (!this.actor) return;
    const info = await api("GET", this.url("info"));
    if (info.ok) this.facts(info.body);
    const schema = await api("GET", this.url("schema"));
    this.tables(schema);
    this.history(await api("GET", this.url("history")));
    if (info.ok) {
      const logs = info.body.logs.map((l) => `${new Date(l.at).toISOString()} ${l.level} ${l.message}`);
      $("logs").textContent = logs.length ? logs.join("\n") : "(none)";
    }
  }

  facts(i) {
    const d = $("actor-facts");
    d.replaceChildren();
    const del = i.deletion?.status === "deleted" ? `deleted at ${new Date(i.deletion.at_ms).toISOString()} (${i.deletion.how})` : i.deletion?.status ?? "";
    const rows = [
      ["status", i.status ?? "no data here", "status"],
      ["alarm", i.alarm == null ? "none" : `${new Date(i.alarm).toISOString()} (${when(i.alarm, i.now)})`, "alarm"],
      ["sockets", i.sockets.length ? i.sockets.join(", ") : "none", "sockets"],
      ["last event", i.last ? `${i.last.kind} → ${i.last.outcome} at ${new Date(i.last.at).toISOString()}` : "none seen", "last"],
      ["deletion record", del, "deletion"],
      ["clock", new Date(i.now).toISOString(), "now"],
    ];
    for (const [k, v, id] of rows) {
      const dd = el("dd", v);
      dd.dataset.testid = `fact-${id}`;
      d.append(el("dt", k), dd);
    }
  }

  history(h) {
    $("history-section").hidden = !(h.ok && (h.body.history ?? h.body.cluster)) && h.ok;
    const box = $("history");
    if (!h.ok) {
      box.replaceChildren(el("div", `${h.kind ?? h.status}: ${h.body?.error ?? ""}`, "error"));
      return;
    }
    const o = h.body.owner;
    const owner = el("div", null, "owner");
    owner.dataset.testid = "owner";
    owner.textContent = !h.body.cluster
      ? "this node's own history (a single node): restore to any record here"
      : o
      ? o.held
        ? `ownership: held by ${o.node} at generation ${o.generation}`
        : `ownership: last held by ${o.node} at generation ${o.generation}, ${o.released ? "released" : "its node not live"}: free to take`
      : h.body.owner_unreadable
        ? "ownership record unreadable"
        : "no node has held it";
    const list = el("ol", null, "timeline");
    list.dataset.testid = "timeline";
    for (const r of h.body.records) {
      const li = el("li", null, `entry ${r.kind}${r.head ? " head" : ""}`);
      li.dataset.kind = r.kind;
      li.append(el("span", r.kind, "kind"), el("span", `generation ${r.generation} · seq ${r.seq}`, "pos"), el("span", describe(r)), el("span", new Date(r.at).toISOString(), "muted"));
      li.title = `${r.key}\nversion ${r.etag}`;
      if (r.kind !== "snapshot" && r.kind !== "reset" && !r.head) {
        // ADR 064: the state here becomes the head at a new position (undone by another restore).
        const b = el("button", "restore to here", "restore");
        b.dataset.testid = "restore-to-here";
        b.onclick = async () => {
          if (!(await confirmAction(`Restore ${this.label()} to ${r.bookmark}? Its open sockets close; a restore to the head before it undoes this.`))) return;
          this.act("POST", "restore", { to: r.bookmark }, `restore to ${r.bookmark}`);
        };
        li.append(b);
      }
      list.append(li);
    }
    box.replaceChildren(owner, h.body.records.length ? list : el("div", "no history", "muted"));
  }

  tables(schema) {
    const tabs = $("tables");
    tabs.replaceChildren();
    if (!schema.ok) {
      tabs.append(el("span", `${schema.kind ?? schema.status}: ${schema.body?.error ?? ""}`, "error"));
      $("table-view").replaceChildren();
      return;
    }
    const list = schema.body.tables;
    if (!list.length) tabs.append(el("span", "no tables", "muted"));
    if (!this.table || !list.some((t) => t.name === this.table)) this.table = list[0]?.name ?? null;
    for (const t of list) {
      const b = el("button", `${t.name} (${t.rows})`, t.name === this.table ? "active" : "");
      b.dataset.table = t.name;
      b.onclick = () => {
        this.table = t.name;
        this.offset = 0;
        this.tables(schema);
      };
      tabs.append(b);
    }
    const rows = list.find((t) => t.name === this.table)?.rows ?? 0;
    this.page(rows);
  }

  async page(total) {
    const view = $("table-view");
    if (!this.table) {
      view.replaceChildren();
      return;
    }
    const table = this.table;
    const r = await api("GET", this.url(`rows/${encodeURIComponent(table)}`, `offset=${this.offset}&limit=${PAGE}`));
    if (!r.ok) {
      view.replaceChildren(el("div", `${r.kind ?? r.status}: ${r.body?.error ?? ""}`, "error"));
      return;
    }
    const t = this.grid(r.body.columns, r.body.rows, (col, i) => {
      api("GET", this.url(`value/${encodeURIComponent(table)}`, `offset=${this.offset + i}&column=${encodeURIComponent(col)}`)).then((v) =>
        showWhole(v.ok ? display(v.body.value, true) : `${v.kind}: ${v.body?.error}`),
      );
    });
    t.dataset.testid = "table-rows";
    const nav = el("div", null, "inline");
    const prev = el("button", "← previous");
    prev.disabled = this.offset === 0;
    prev.onclick = () => {
      this.offset = Math.max(0, this.offset - PAGE);
      this.page(total);
    };
    const next = el("button", "next →");
    next.disabled = this.offset + PAGE >= total;
    next.onclick = () => {
      this.offset += PAGE;
      this.page(total);
    };
    const shown = r.body.rows.length ? `rows ${this.offset + 1}–${this.offset + r.body.rows.length} of ${total}` : "no rows";
    nav.append(prev, el("span", shown, "muted"), next);
    view.replaceChildren(nav, t);
  }

  /** A table of values; a cut value calls `whole(column, rowIndex)` on click. */
  grid(columns, rows, whole) {
    const t = el("table", null, "data");
    const head = el("tr");
    for (const c of columns) head.append(el("th", c));
    t.append(head);
    rows.forEach((row, i) => {
      const tr = el("tr");
      row.forEach((v, j) => {
        const td = el("td");
        if (v === null) td.append(el("span", "NULL", "null"));
        else if (typeof v === "object" && v.length != null && whole) {
          td.append(el("span", display(v), v.blob != null ? "blob" : ""));
          const more = el("span", ` … ${v.length} bytes: show whole`, "cut");
          more.onclick = () => whole(columns[j], i);
          td.append(more);
        } else td.append(el("span", display(v), typeof v === "object" && v?.blob != null ? "blob" : ""));
        tr.append(td);
      });
      t.append(tr);
    });
    return t;
  }

  async runSql() {
    const out = $("sql-result");
    const r = await api("POST", this.url("query"), { sql: $("sql").value });
    if (!r.ok) {
      const e = el("div", `${r.status} ${r.kind ?? ""}: ${r.body?.error ?? ""}`, "error");
      e.dataset.kind = r.kind ?? "";
      out.replaceChildren(e);
      return;
    }
    const t = this.grid(r.body.columns, r.body.rows, null);
    out.replaceChildren(t, el("div", r.body.truncated ? "(more rows than shown)" : `${r.body.rows.length} row(s)`, "muted"));
  }
}

/** A value as text: blobs as hex, cut values as their prefix. */
function display(v, whole) {
  if (v === null) return "NULL";
  if (typeof v !== "object") return String(v);
  if (v.blob != null) return `x'${v.blob}'`;
  if (v.text != null) return whole ? v.text : v.text;
  return JSON.stringify(v);
}
