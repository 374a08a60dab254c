// The dashboard's entry: the live feed (server-sent events), the actors
// list, one actor's view, and the side panels (time, faults, cluster,
// metrics). Everything it shows or does goes through the admin API.

import { api, readEvents, setToken } from "./api.js";
import { ActorList } from "./actors.js";
import { ActorView, confirmAction } from "./actor.js";
import { addSample, render as renderCharts, seed as seedCharts } from "./charts.js";

const $ = (id) => document.getElementById(id);
// What the browser test reads: when the first full list was drawn.
const stats = (window.__dashboard = { openedMs: null, firstListMs: null, firstUpdateMs: null, updates: 0, chartSamplesAtLoad: null });

const list = new ActorList({
  list: $("list"),
  inner: $("list-inner"),
  count: $("count"),
  filter: $("filter"),
  status: $("status-filter"),
  onOpen: (a) => {
    location.hash = `#/actor/${encodeURIComponent(a.class)}/${encodeURIComponent(a.name)}`;
  },
});
const view = new ActorView((cls, name) => {
  for (const a of list.byId.values()) if (a.class === cls && a.name === name) return a.holder;
  return null;
});
$("back").onclick = () => {
  location.hash = "";
};

function route() {
  const m = location.hash.match(/^#\/actor\/([^/]+)\/(.+)$/);
  $("actor-panel").hidden = !m;
  $("actors-panel").hidden = !!m;
  if (m) view.open({ class: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]) });
  else view.actor = null;
}
window.addEventListener("hashchange", route);

// Side panels.
let faultsShown = "";
function showFaults(faults) {
  const key = JSON.stringify(faults);
  if (key === faultsShown) return;
  faultsShown = key;
  const t = $("faults");
  t.replaceChildren();
  for (const [kind, left] of Object.entries(faults)) {
    const tr = document.createElement("tr");
    tr.dataset.kind = kind;
    const name = document.createElement("td");
    name.textContent = kind;
    const armed = document.createElement("td");
    armed.textContent = left ? `armed ×${left}` : "";
    armed.dataset.testid = `fault-left-${kind}`;
    const count = document.createElement("input");
    count.type = "number";
    count.min = "1";
    count.value = "1";
    count.dataset.testid = `fault-count-${kind}`;
    const arm = document.createElement("button");
    arm.textContent = "arm";
    arm.dataset.testid = `fault-arm-${kind}`;
    arm.onclick = () => api("POST", "/_shim/faults", { kind, count: Number(count.value) || 1 }).then((r) => r.ok && showFaults(r.body.faults));
    const clear = document.createElement("button");
    clear.textContent = "clear";
    clear.onclick = () => api("POST", "/_shim/faults", { kind, count: 0 }).then((r) => r.ok && showFaults(r.body.faults));
    const cells = [name, armed, document.createElement("td"), document.createElement("td")];
    cells[2].append(count, arm);
    cells[3].append(clear);
    tr.append(...cells);
    t.append(tr);
  }
}
$("clear-faults").onclick = () => api("DELETE", "/_shim/faults").then((r) => r.ok && showFaults(r.body.faults));

function showClock(now, virtual) {
  $("clock").textContent = `${virtual ? "virtual" : "real"} clock ${new Date(now).toISOString()}`;
  $("advance-form").hidden = !virtual;
}

async function advance(ms) {
  const r = await api("POST", "/_shim/clock/advance", { ms });
  $("time-result").textContent = r.ok ? `now ${new Date(r.body.now).toISOString()}` : `${r.kind ?? r.status}: ${r.body?.error}`;
  if (r.ok) showClock(r.body.now, true);
}
$("advance-form").onsubmit = (e) => {
  e.preventDefault();
  advance(Number($("advance-ms").value));
};
for (const b of document.querySelectorAll("button.preset")) b.onclick = () => advance(Number(b.dataset.ms));
$("run-alarms").onclick = async () => {
  const r = await api("POST", "/_shim/alarms/run");
  $("time-result").textContent = r.ok ? `${r.body.ran} alarm(s) ran` : `${r.kind ?? r.status}: ${r.body?.error}`;
  view.refresh();
};
$("hibernate-all").onclick = async () => {
  const r = await api("POST", "/_shim/hibernate");
  $("time-result").textContent = r.ok ? "every actor hibernated" : `${r.status}: ${r.body?.error}`;
};

let clusterShown = "";
function showCluster(node, live, actors) {
  const held = {};
  for (const a of actors) if (a.holder) held[a.holder] = (held[a.holder] ?? 0) + 1;
  const key = JSON.stringify([node, live, held]);
  if (key === clusterShown) return;
  clusterShown = key;
  const c = $("cluster");
  c.replaceChildren();
  if (!node) {
    c.textContent = "a single node: every actor listed is held here";
    return;
  }
  const t = document.createElement("table");
  for (const n of [...new Set([...live, node, ...Object.keys(held)])].sort()) {
    const tr = document.createElement("tr");
    tr.dataset.node = n;
    for (const text of [n, live.includes(n) ? "live" : "not live", `holds ${held[n] ?? 0}`, n === node ? "(this page's node)" : ""]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    t.append(tr);
  }
  const cut = document.createElement("button");
  cut.textContent = `cut ${node} off`;
  cut.className = "danger";
  const said = document.createElement("div");
  cut.onclick = async () => {
    if (!(await confirmAction(`Cut ${node} off from its cluster? It will hold nothing from then on.`))) return;
    const r = await api("POST", "/_shim/cluster/cut-off");
    said.textContent = r.ok ? `${node} is cut off` : `${r.status}: ${r.body?.error}`;
  };
  c.append(t, cut, said);
}

// The live feed: the first update is the whole list, then only changes.
let openActorId = null;
function onUpdate(u) {
  stats.updates++;
  if (u.reset && stats.firstUpdateMs == null) stats.firstUpdateMs = performance.now();
  list.apply(u);
  if (u.reset && stats.firstListMs == null) stats.firstListMs = performance.now();
  showClock(u.now, u.virtual);
  showFaults(u.faults);
  showCluster(u.node, u.live, list.byId.values());
  $("node").textContent = u.node ?? "single node";
  if (addSample(u.counters)) renderCharts($("charts"));
  // The open actor changed (or went): read it again.
  if (view.actor) {
    const id = `${view.actor.class}/${view.actor.name}`;
    const touched = u.upsert.some((a) => `${a.class}/${a.name}` === id) || u.gone.some((g) => g.endsWith(`:${id}`));
    if (touched || openActorId !== id) view.refresh();
    openActorId = id;
  }
}

// The charts start from the server's history of the counters, not from empty.
async function loadChartHistory() {
  const r = await api("GET", "/_shim/metrics/history");
  if (!r.ok) return;
  stats.chartSamplesAtLoad = seedCharts(r.body.samples);
  renderCharts($("charts"));
}

async function connect() {
  loadChartHistory().catch(() => {});
  const conn = $("conn");
  for (;;) {
    try {
      await readEvents("/_shim/events", (name, data) => name === "update" && onUpdate(data), () => {
        stats.openedMs ??= performance.now();
        conn.textContent = "live";
        conn.className = "pill live";
      });
      conn.textContent = "disconnected: retrying";
    } catch (e) {
      if (e.status === 401) {
        conn.textContent = "the admin API needs its token";
        $("token-form").hidden = false;
        return;
      }
      conn.textContent = `disconnected (${e.message}): retrying`;
    }
    conn.className = "pill";
    await new Promise((r) => setTimeout(r, 1000));
  }
}
$("token-form").onsubmit = (e) => {
  e.preventDefault();
  setToken($("token").value);
  $("token-form").hidden = true;
  connect();
};

route();
connect();
