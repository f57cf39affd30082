// The per-instance table: one row per target, its own rates and gauges.
// Clicking a row filters every chart to that instance.
import { pos, reason } from "./store.js";
import * as f from "./fmt.js";

const COLS = [
  { h: "Instance", cls: "name" },
  { h: "Role" },
  { h: "Engine" },
  { h: "Status", cls: "status" },
  { h: "req/s", win: true, num: true, get: (ctx) => (ctx.mode === "w" ? "requests_per_second_window" : "requests_per_second"), fmt: f.rate },
  { h: "KV B/s", win: true, num: true, get: (ctx) => (ctx.mode === "w" ? "kv_bytes_per_second_window" : "kv_bytes_per_second"), fmt: (v) => f.si(v) },
  { h: "Running", num: true, get: () => "running", fmt: f.count },
  { h: "Waiting", num: true, get: () => "waiting", fmt: f.count },
  { h: "Bootstrap", num: true, get: () => "queue_bootstrap", fmt: f.count },
  { h: "Inflight", num: true, get: () => "queue_inflight", fmt: f.count },
  { h: "Prealloc", num: true, get: () => "queue_prealloc", fmt: f.count },
  { h: "Transfer", num: true, get: () => "queue_transfer", fmt: f.count },
  { h: "KV cache", num: true, get: () => "kv_cache_usage_ratio", fmt: f.pct },
  { h: "Prompt tok/s", num: true, get: () => "prompt_tokens_per_second", fmt: (v) => f.si(v) },
  { h: "Gen tok/s", num: true, get: () => "generation_tokens_per_second", fmt: (v) => f.si(v) },
];

export class Table {
  constructor(el, onPick) {
    this.el = el;
    this.onPick = onPick;
    const head = document.createElement("tr");
    this.heads = [];
    for (const c of COLS) {
      const th = document.createElement("th");
      th.textContent = c.h;
      if (c.num) th.className = "num";
      head.append(th);
      this.heads.push(th);
    }
    el.createTHead().append(head);
    this.body = el.createTBody();
    this.rows = new Map();
    this.errors = {};
  }

  // setTargets takes /api/v1/targets: the last scrape error of each target.
  setTargets(ts) {
    this.errors = {};
    for (const t of ts || []) this.errors[t.name] = t.last_error || "";
  }

  update(pt, ctx) {
    if (!pt) return;
    // Rate columns say their window, as the big numbers do.
    COLS.forEach((c, j) => {
      if (c.win) this.heads[j].textContent = `${c.h} (${ctx.mode === "w" ? ctx.window + " s" : "instant"})`;
    });
    const seen = new Set();
    pt.names.forEach((n, r) => {
      seen.add(n.target);
      let tr = this.rows.get(n.target);
      if (!tr) {
        tr = document.createElement("tr");
        tr.dataset.target = n.target;
        for (const c of COLS) {
          const td = document.createElement("td");
          if (c.cls) td.className = c.cls;
          if (c.num) td.className = "num";
          tr.append(td);
        }
        tr.addEventListener("click", () => this.onPick(n.target));
        this.rows.set(n.target, tr);
        this.body.append(tr);
      }
      const row = pt.i[r] || [];
      const up = row[pos("i", "up")] === 1;
      const cells = tr.children;
      cells[0].textContent = n.target;
      cells[1].textContent = n.role;
      cells[1].className = "role-" + n.role;
      cells[2].textContent = n.engine;
      // A scrape error names its URL twice ("GET u: Get "u": …"): once is enough.
      const err = (this.errors[n.target] || reason(pt, `i${r}`) || "").replace(/^(GET (\S+): )Get "[^"]*": /, "$1");
      cells[3].textContent = up ? "up" : "down" + (err ? ": " + err : "");
      cells[3].title = err;
      cells[3].className = "status " + (up ? "up" : "down");
      COLS.forEach((c, j) => {
        if (!c.get) return;
        const k = pos("i", c.get(ctx));
        const v = row[k];
        cells[j].textContent = c.fmt(v);
        cells[j].title = v == null ? "absent: " + (reason(pt, `i${r}.${k}`) || "unknown") : "";
        cells[j].classList.toggle("absent", v == null);
      });
      tr.classList.toggle("picked", ctx.filter === n.target);
      tr.classList.toggle("is-down", !up);
    });
    for (const [name, tr] of this.rows) {
      if (!seen.has(name)) { tr.remove(); this.rows.delete(name); }
    }
    this.el.dataset.rows = String(this.rows.size);
  }
}
