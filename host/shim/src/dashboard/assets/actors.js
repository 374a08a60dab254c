// The actors list: every actor in a Map by id, the filtered view as an
// array, and only the rows in sight in the DOM (a list of 10,000 draws ~40
// rows), so loading and filtering stay well under a second.

const ROW = 26; // px, as --row in style.css
const EXTRA = 10; // rows drawn above and below the visible ones

export class ActorList {
  constructor({ list, inner, count, filter, status, onOpen }) {
    Object.assign(this, { list, inner, count, filterEl: filter, statusEl: status, onOpen });
    this.byId = new Map();
    this.view = [];
    this.now = 0;
    this.pending = false;
    list.addEventListener("scroll", () => this.schedule());
    filter.addEventListener("input", () => this.refilter());
    status.addEventListener("change", () => this.refilter());
    inner.addEventListener("click", (e) => {
      const row = e.target.closest(".row");
      if (row) this.onOpen(this.byId.get(row.dataset.id));
    });
  }

  /** Applies one live update: everything anew, or changed and gone rows. */
  apply(update) {
    if (update.reset) this.byId.clear();
    for (const a of update.upsert) this.byId.set(a.id, a);
    for (const id of update.gone) this.byId.delete(id);
    const moved = this.now !== update.now; // alarms are shown relative to the clock
    this.now = update.now;
    if (update.reset || update.upsert.length || update.gone.length) this.refilter();
    else if (moved) this.schedule();
  }

  /** Recomputes the filtered view and draws it now (the filter's latency is this call). */
  refilter() {
    const words = this.filterEl.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const status = this.statusEl.value;
    const out = [];
    for (const a of this.byId.values()) {
      if (status && a.status !== status) continue;
      if (words.length) {
        const hay = a.hay ?? (a.hay = `${a.app} ${a.class}/${a.name} ${a.class} ${a.name}`.toLowerCase());
        if (!words.every((w) => hay.includes(w))) continue;
      }
      out.push(a);
    }
    out.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    this.view = out;
    this.count.textContent = `${out.length} of ${this.byId.size} actors`;
    this.draw();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  /** Draws the rows in sight, with padding for the rest. */
  draw() {
    const first = Math.max(0, Math.floor(this.list.scrollTop / ROW) - EXTRA);
    const shown = Math.ceil(this.list.clientHeight / ROW) + 2 * EXTRA;
    const last = Math.min(this.view.length, first + shown);
    this.inner.style.paddingTop = `${first * ROW}px`;
    this.inner.style.height = `${this.view.length * ROW}px`;
    const rows = [];
    for (let i = first; i < last; i++) rows.push(this.rowEl(this.view[i]));
    this.inner.replaceChildren(...rows);
  }

  rowEl(a) {
    const row = document.createElement("div");
    row.className = "row";
    row.dataset.id = a.id;
    row.dataset.testid = "actor-row";
    const last = a.last ? `${a.last.kind} → ${a.last.outcome}` : "";
    const cells = [
      `${a.class}/${a.name}`,
      a.app,
      a.holder ? `${a.status} on ${a.holder}` : a.status,
      a.alarm == null ? "" : when(a.alarm, this.now),
      a.sockets ? String(a.sockets) : "",
      last,
    ];
    cells.forEach((text, i) => {
      const span = document.createElement("span");
      span.textContent = text;
      if (i === 2) span.className = `status-${a.status}`;
      if (i === 5 && a.last) span.title = `at ${new Date(a.last.at).toISOString()}`;
      row.append(span);
    });
    return row;
  }
}

/** An alarm's due time, relative to the host's clock. */
export function when(at, now) {
  const d = at - now;
  const abs = Math.abs(d);
  const text =
    abs < 60e3 ? `${Math.round(abs / 1e3)} s` : abs < 3600e3 ? `${Math.round(abs / 60e3)} min` : abs < 172800e3 ? `${(abs / 3600e3).toFixed(1)} h` : `${(abs / 86400e3).toFixed(1)} d`;
  return d >= 0 ? `in ${text}` : `due ${text} ago`;
}
