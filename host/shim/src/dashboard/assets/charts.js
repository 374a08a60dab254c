// The counters of /metrics over the last minutes, as small inline SVG lines.
// The server's history (a sample every 5 s for 10 minutes) seeds them when
// the page opens; then each live update adds one, kept every 2 s.

const KEEP_MS = 10 * 60 * 1000;
const EVERY_MS = 2000;
const samples = []; // {t, counters}
const NS = "http://www.w3.org/2000/svg";

/** Starts from the server's samples (`GET /_shim/metrics/history`), oldest first. */
export function seed(history) {
  const newer = samples.splice(0);
  for (const s of history) samples.push({ t: s.at, counters: s.counters });
  const last = samples.length ? samples[samples.length - 1].t : 0;
  for (const s of newer) if (s.t > last) samples.push(s);
  return samples.length;
}

export function addSample(counters) {
  const t = Date.now();
  if (samples.length && t - samples[samples.length - 1].t < EVERY_MS) return false;
  samples.push({ t, counters });
  while (samples.length && t - samples[0].t > KEEP_MS) samples.shift();
  return true;
}

function sparkline(values) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 90 22");
  const max = Math.max(1, ...values);
  const min = Math.min(...values);
  const span = Math.max(1, max - min);
  const n = values.length;
  const pts = values.map((v, i) => `${n > 1 ? (i * 88) / (n - 1) + 1 : 45},${21 - ((v - min) * 20) / span}`);
  const line = document.createElementNS(NS, "polyline");
  line.setAttribute("points", pts.join(" "));
  svg.append(line);
  return svg;
}

export function render(el) {
  const names = new Set();
  for (const s of samples) for (const k of Object.keys(s.counters)) names.add(k);
  el.replaceChildren();
  if (!names.size) {
    el.textContent = "no counters yet";
    return;
  }
  for (const name of [...names].sort()) {
    const values = samples.map((s) => s.counters[name] ?? 0);
    const row = document.createElement("div");
    row.className = "chart";
    const label = document.createElement("span");
    // wasmkeep_actor_deletes_total{how="operator"} -> actor_deletes{operator}; the title has it whole.
    const short = name.replace(/^wasmkeep_/, "").replace(/_total/, "").replace(/\w+="([^"]*)"/g, "$1");
    label.textContent = `${values[values.length - 1]}  ${short}`;
    label.title = name;
    row.append(label, sparkline(values));
    el.append(row);
  }
}
