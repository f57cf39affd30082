// The fleet table: instances grouped, sorted, filtered and paged by the
// server (/api/v1/instances, docs/web.md), so the page holds a few dozen rows
// whatever the size of the fleet and no instance's data travels unless its
// row is on screen. Group summary rows come first (worst first); a group
// expands into its own instances, paged. Under them, the instances that
// match the filter, outliers first unless a column says otherwise.
// Clicking an instance row shows that instance in every chart.
import * as f from "./fmt.js";

export const PAGE = 25; // instance rows per list or expanded group
const POLL_MS = 1000;

// get reads a field of an instance's values; the queues may be nested
// ("queues.bootstrap") as in /api/v1/snapshot.
function get(obj, path) {
  if (!obj) return null;
  if (path in obj) return obj[path];
  let v = obj;
  for (const k of path.split(".")) {
    if (v == null || typeof v !== "object") return null;
    v = v[k];
  }
  return v === undefined ? null : v;
}

const rateField = (mode) => (mode === "w" ? "requests_per_second_window" : "requests_per_second");
const kvField = (mode) => (mode === "w" ? "kv_bytes_per_second_window" : "kv_bytes_per_second");

// COLS: h is the head; sort, the server's sort key (a function of the rate
// flavour for rates); field, the instance value shown; group, the group
// summary's value for that column.
const COLS = [
  { h: "Instance", cls: "name", sort: () => "name", order: "asc" },
  { h: "Role", sort: () => "role", order: "asc" },
  { h: "Engine", sort: () => "engine", order: "asc" },
  { h: "Group · model", cls: "model", sort: () => "group", order: "asc" },
  { h: "Status", cls: "status", sort: () => "outlier" },
  { h: "req/s", win: true, num: true, sort: rateField, field: rateField, fmt: f.rate, group: (g, m) => [g[rateField(m)], "sum over up instances"] },
  { h: "KV B/s", win: true, num: true, sort: kvField, field: kvField, fmt: (v) => f.si(v) },
  { h: "Running", num: true, sort: () => "running", field: () => "running", fmt: f.count, group: (g) => [g.running, "sum"] },
  { h: "Waiting", num: true, sort: () => "waiting", field: () => "waiting", fmt: f.count, group: (g) => [g.waiting, "sum"] },
  { h: "Bootstrap", num: true, field: () => "queues.bootstrap", fmt: f.count },
  { h: "Inflight", num: true, field: () => "queues.inflight", fmt: f.count },
  { h: "Prealloc", num: true, field: () => "queues.prealloc", fmt: f.count },
  { h: "Transfer", num: true, field: () => "queues.transfer", fmt: f.count },
  { h: "KV cache", num: true, sort: () => "kv_cache_usage_ratio", field: () => "kv_cache_usage_ratio", fmt: f.pct, group: (g) => [g.kv_cache_usage_ratio_max, "highest"] },
  { h: "Prompt tok/s", num: true, sort: () => "prompt_tokens_per_second", field: () => "prompt_tokens_per_second", fmt: (v) => f.si(v) },
  { h: "Gen tok/s", num: true, sort: () => "generation_tokens_per_second", field: () => "generation_tokens_per_second", fmt: (v) => f.si(v) },
];
const STATUS_COL = COLS.findIndex((c) => c.h === "Status");
const RATE_COL = COLS.findIndex((c) => c.h === "req/s");

function td(cls) {
  const el = document.createElement("td");
  if (cls) el.className = cls;
  return el;
}

// set writes text and a tooltip only when they change, so that a poll
// whose values are unchanged costs no layout.
function set(el, text, title = "") {
  if (el.textContent !== text) el.textContent = text;
  if (el.title !== title) el.title = title;
}

const keyText = (key) => Object.values(key || {}).map((v) => (v == null || v === "" ? "—" : v)).join(" / ");

// scrapeError shortens a scrape error that names its URL twice
// ("GET u: Get "u": …").
const scrapeError = (e) => (e || "").replace(/^(GET (\S+): )Get "[^"]*": /, "$1");

export class Table {
  // el is the <table>; controls holds the filter box, status filter,
  // grouping select and counts; onPick(name) picks an instance;
  // paused() says whether to stop polling.
  constructor(el, controls, onPick, paused) {
    this.el = el;
    this.c = controls;
    this.onPick = onPick;
    this.paused = paused;
    this.mode = "w";
    this.window = 5;
    this.picked = null;
    // What the server is asked for.
    this.q = { by: controls.by.value, sort: "outlier", order: "", q: "", status: controls.status.value };
    this.offset = 0;
    this.expanded = new Map(); // group id -> offset
    this.seq = 0; // bumped on every change of the query; older answers are dropped
    this.busy = false;
    this.again = false;
    this.last = null; // the last answers, to re-render on a mode change

    const head = document.createElement("tr");
    this.heads = COLS.map((c) => {
      const th = document.createElement("th");
      th.textContent = c.h;
      if (c.num) th.className = "num";
      if (c.sort) {
        th.classList.add("sortable");
        th.tabIndex = 0;
        const go = () => this.sortBy(c);
        th.addEventListener("click", go);
        th.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
      }
      head.append(th);
      return th;
    });
    el.createTHead().append(head);
    this.groupBody = el.createTBody();
    this.groupBody.className = "groups";
    this.listBody = el.createTBody();
    this.listBody.className = "list";
    this.trs = new Map(); // row key -> <tr>, reused across polls

    let typing;
    controls.q.addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(() => this.change({ q: controls.q.value.trim() }), 200);
    });
    controls.status.addEventListener("change", () => this.change({ status: controls.status.value }));
    controls.by.addEventListener("change", () => { this.expanded.clear(); this.change({ by: controls.by.value }); });
    this.heading();
  }

  start() {
    const tick = async () => {
      if (!this.paused() && document.visibilityState === "visible") await this.poll();
      setTimeout(tick, POLL_MS);
    };
    tick();
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") this.refresh(); });
  }

  setMode(mode, window) {
    const was = this.mode;
    this.mode = mode;
    this.window = window;
    this.heading();
    // A sort on a rate follows the rate flavour.
    const c = COLS.find((c) => c.win && c.sort(was) === this.q.sort);
    if (c && was !== mode) this.change({ sort: c.sort(mode) });
    else if (this.last) this.render(...this.last);
  }

  setPicked(name) {
    this.picked = name;
    for (const tr of this.trs.values()) tr.classList.toggle("picked", !!name && tr.dataset.target === name);
  }

  sortBy(c) {
    const key = c.sort(this.mode);
    let order = c.order || (key === "outlier" ? "" : "desc");
    if (key === this.q.sort && key !== "outlier") order = (this.q.order || c.order || "desc") === "desc" ? "asc" : "desc";
    this.change({ sort: key, order });
  }

  // setStatus is the counts' shortcut to the status filter.
  setStatus(s) {
    this.c.status.value = s;
    this.change({ status: s });
  }

  change(q) {
    Object.assign(this.q, q);
    this.offset = 0;
    for (const id of this.expanded.keys()) this.expanded.set(id, 0);
    this.heading();
    this.refresh();
  }

  // refresh asks again now (after a change), or as soon as the poll in
  // flight is done.
  refresh() {
    this.seq++;
    if (this.busy) this.again = true;
    else this.poll();
  }

  url(extra) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...this.q, ...extra })) if (v !== "" && v != null) p.set(k, v);
    return "/api/v1/instances?" + p.toString();
  }

  async poll() {
    if (this.busy) { this.again = true; return; }
    this.busy = true;
    const seq = this.seq;
    try {
      const get = async (u) => {
        const r = await fetch(u);
        if (!r.ok) throw new Error(`${u}: ${r.status} ${(await r.text()).trim()}`);
        return r.json();
      };
      const ids = [...this.expanded.keys()];
      const [main, ...parts] = await Promise.all([
        get(this.url({ offset: this.offset, limit: PAGE })),
        ...ids.map((id) => get(this.url({ group: id, offset: this.expanded.get(id), limit: PAGE }))),
      ]);
      if (seq === this.seq) {
        this.error = "";
        this.last = [main, new Map(ids.map((id, i) => [id, parts[i]]))];
        this.render(...this.last);
      }
    } catch (e) {
      this.error = String(e.message || e);
      this.c.note.textContent = this.error;
    } finally {
      this.busy = false;
      if (this.again) { this.again = false; this.poll(); }
    }
  }

  // heading writes the column heads: the rate flavour, and the sort.
  heading() {
    COLS.forEach((c, j) => {
      let t = c.win ? `${c.h} (${this.mode === "w" ? this.window + " s" : "instant"})` : c.h;
      const on = c.sort && c.sort(this.mode) === this.q.sort;
      if (on && this.q.sort !== "outlier") t += (this.q.order || c.order || "desc") === "asc" ? " ▲" : " ▼";
      if (on && this.q.sort === "outlier") t += " ▼";
      set(this.heads[j], t, c.sort ? "sort by " + c.h : "");
      this.heads[j].classList.toggle("sorted", !!on);
      if (on) this.heads[j].setAttribute("aria-sort", (this.q.order || c.order) === "asc" ? "ascending" : "descending");
      else this.heads[j].removeAttribute("aria-sort");
    });
  }

  render(main, parts) {
    this.renderCounts(main);
    const used = new Set();
    const groupRows = [];
    const ids = new Set();
    for (const g of main.groups || []) {
      ids.add(g.id);
      groupRows.push(this.groupRow(g, used));
      const part = parts.get(g.id);
      if (!this.expanded.has(g.id)) continue;
      if (part) {
        for (const r of part.rows || []) groupRows.push(this.instanceRow(r, "g:" + g.id, used));
        groupRows.push(this.pagerRow("gp:" + g.id, this.expanded.get(g.id), part.matched, (o) => { this.expanded.set(g.id, o); this.refresh(); }, used, "member"));
      }
    }
    // A group that is gone (another grouping, or its last instance left)
    // is no longer expanded.
    for (const id of this.expanded.keys()) if (!ids.has(id)) this.expanded.delete(id);

    const list = [this.listHead(main, used)];
    for (const r of main.rows || []) list.push(this.instanceRow(r, "l", used));
    if ((main.matched || 0) > PAGE) list.push(this.pagerRow("lp", this.offset, main.matched, (o) => { this.offset = o; this.refresh(); }, used, ""));

    for (const [k, tr] of this.trs) if (!used.has(k)) this.trs.delete(k);
    replace(this.groupBody, groupRows);
    replace(this.listBody, list);
    const d = this.el.dataset;
    d.groups = String((main.groups || []).length);
    d.rows = String((main.rows || []).length);
    d.matched = String(main.matched ?? "");
    d.total = String(main.total ?? "");
    d.query = this.url({ offset: this.offset, limit: PAGE });
  }

  renderCounts(main) {
    const n = main.counts || {};
    set(this.c.total, main.total != null ? `${main.total.toLocaleString()} instances` : "");
    const parts = [["down", "down"], ["stalled", "stalled"], ["queued", "queued"], ["slow", "slow"]].map(([k, status]) => {
      const b = document.createElement("button");
      b.className = "count" + (n[k] ? " bad" : "");
      b.dataset.count = k;
      b.textContent = `${n[k] ?? "?"} ${k}`;
      b.title = `show the ${k} instances`;
      b.addEventListener("click", () => this.setStatus(status));
      return b;
    });
    this.c.counts.replaceChildren(...parts);
    set(this.c.note, this.error || "");
  }

  // row returns the reused <tr> for key, made by make on first use.
  row(key, used, make) {
    used.add(key);
    let tr = this.trs.get(key);
    if (!tr) {
      tr = make();
      this.trs.set(key, tr);
    }
    return tr;
  }

  groupRow(g, used) {
    const tr = this.row("G:" + g.id, used, () => {
      const tr = document.createElement("tr");
      tr.className = "group";
      for (const c of COLS) tr.append(td((c.num ? "num" : c.cls) || ""));
      tr.tabIndex = 0;
      const toggle = () => {
        if (this.expanded.has(g.id)) this.expanded.delete(g.id);
        else this.expanded.set(g.id, 0);
        this.refresh();
      };
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") toggle(); });
      return tr;
    });
    const open = this.expanded.has(g.id);
    tr.dataset.group = g.id;
    tr.classList.toggle("open", open);
    tr.setAttribute("aria-expanded", String(open));
    const cells = tr.children;
    const key = g.key || {};
    set(cells[0], `${open ? "▾" : "▸"} ${keyText(key) || g.id}`, open ? "collapse" : "show this group's instances");
    set(cells[1], key.role ? `${g.instances} ${key.role}` : `${g.instances} instances`);
    cells[1].className = key.role ? "role-" + key.role : "";
    set(cells[2], key.engine || "");
    set(cells[3], [key.group, key.model].filter(Boolean).join(" · "), key.model || "");
    const bad = [];
    if (g.down) bad.push(`${g.down} down`);
    if (g.stalled) bad.push(`${g.stalled} stalled`);
    if (g.flagged) bad.push(`${g.flagged} flagged`);
    set(cells[STATUS_COL], `${g.up}/${g.instances} up` + (bad.length ? " · " + bad.join(" · ") : ""));
    cells[STATUS_COL].className = "status " + (g.down || g.stalled ? "down" : g.flagged ? "warn" : "up");
    COLS.forEach((c, j) => {
      if (!c.num) return;
      if (!c.group) { set(cells[j], ""); return; }
      const [v, how] = c.group(g, this.mode);
      set(cells[j], c.fmt(v), v == null ? "absent" : how);
      cells[j].classList.toggle("absent", v == null);
    });
    if (c2(g.requests_per_second_window_median)) cells[RATE_COL].title += `; median ${f.rate(g.requests_per_second_window_median)} req/s over W`;
    return tr;
  }

  instanceRow(r, scope, used) {
    const tr = this.row(scope + ":" + r.name, used, () => {
      const tr = document.createElement("tr");
      tr.className = "inst" + (scope === "l" ? "" : " member");
      for (const c of COLS) tr.append(td((c.num ? "num" : c.cls) || ""));
      tr.dataset.target = r.name;
      tr.tabIndex = 0;
      tr.addEventListener("click", () => this.onPick(r.name));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") this.onPick(r.name); });
      return tr;
    });
    const cells = tr.children;
    set(cells[0], r.name, r.name);
    set(cells[1], r.role || "");
    cells[1].className = "role-" + r.role;
    set(cells[2], r.engine || "");
    // The model's last path element: "meta-llama/Llama-3.1-8B" reads
    // "Llama-3.1-8B"; the tooltip has it whole.
    const model = r.model ? r.model.slice(r.model.lastIndexOf("/") + 1) : "";
    set(cells[3], [r.group, model].filter(Boolean).join(" · "),
      `group ${r.group || "—"}; model ` + (r.model || "absent: " + (get(r.reasons, "model") || "not known")));
    // Each flag says its kind and why ("stalled: 6 running, …").
    const flags = r.flags || [];
    const status = r.status || (r.up ? "ok" : "down");
    const err = scrapeError(r.last_error);
    let text = status === "ok" ? "up" : status;
    if (!r.up) text = err ? "down: " + err : "down";
    else if (flags.length) text = flags.join("; ");
    set(cells[STATUS_COL], text, [err, ...flags].filter(Boolean).join("\n"));
    cells[STATUS_COL].className = "status s-" + status + (r.up ? (status === "ok" ? " up" : " warn") : " down");
    COLS.forEach((c, j) => {
      if (!c.field) return;
      const name = c.field(this.mode);
      const v = get(r.values, name);
      set(cells[j], c.fmt(v), v == null ? "absent: " + (get(r.reasons, name) || (r.up ? "unknown" : err || "down")) : "");
      cells[j].classList.toggle("absent", v == null);
    });
    tr.dataset.status = status;
    tr.classList.toggle("picked", this.picked === r.name);
    tr.classList.toggle("is-down", !r.up);
    return tr;
  }

  // listHead is the caption row of the instance list: what it shows and
  // which part of it.
  listHead(main, used) {
    const tr = this.row("LH", used, () => {
      const tr = document.createElement("tr");
      tr.className = "listhead";
      const cell = td();
      cell.colSpan = COLS.length;
      tr.append(cell);
      return tr;
    });
    const col = COLS.find((c) => c.sort && c.sort(this.mode) === this.q.sort);
    const order = this.q.sort === "outlier" ? "outliers first (down, stalled, queued, slow), then by name"
      : `by ${col ? col.h : this.q.sort} ${(this.q.order || (col && col.order) || "desc") === "asc" ? "ascending" : "descending"}`;
    const what = { all: "All instances", outlier: "Outliers", down: "Down instances", stalled: "Stalled instances",
      queued: "Queued instances", slow: "Slow instances", up: "Up instances" }[this.q.status] || "Instances";
    const m = main.matched || 0;
    const range = m ? `${(this.offset + 1).toLocaleString()}–${Math.min(this.offset + PAGE, m).toLocaleString()} of ${m.toLocaleString()}` : "none";
    set(tr.firstChild, `${what}${this.q.q ? ` matching “${this.q.q}”` : ""}, ${order}: ${range}`);
    return tr;
  }

  pagerRow(key, offset, matched, go, used, cls) {
    const tr = this.row(key, used, () => {
      const tr = document.createElement("tr");
      tr.className = "pager " + cls;
      const cell = td();
      cell.colSpan = COLS.length;
      const prev = document.createElement("button");
      prev.textContent = "‹ previous";
      const next = document.createElement("button");
      next.textContent = "next ›";
      const span = document.createElement("span");
      cell.append(prev, " ", span, " ", next);
      tr.append(cell);
      prev.addEventListener("click", (e) => { e.stopPropagation(); go(Math.max(0, tr.offset - PAGE)); });
      next.addEventListener("click", (e) => { e.stopPropagation(); go(tr.offset + PAGE); });
      return tr;
    });
    tr.offset = offset;
    const [prev, span, next] = tr.querySelectorAll("button, span");
    prev.disabled = offset === 0;
    next.disabled = offset + PAGE >= matched;
    set(span, matched ? `${offset + 1}–${Math.min(offset + PAGE, matched)} of ${matched.toLocaleString()}` : "no instance matches");
    return tr;
  }
}

const c2 = (v) => v != null && isFinite(v);

// replace puts rows into body in order, moving only what moved.
function replace(body, rows) {
  const kids = body.children;
  let same = kids.length === rows.length;
  for (let i = 0; same && i < rows.length; i++) same = kids[i] === rows[i];
  if (!same) body.replaceChildren(...rows);
}
