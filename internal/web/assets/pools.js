// The pools panel: one row per pool (docs/pools.md) from
// /api/v1/snapshot's pools and verdict.groups: its model, its B_request and
// where it came from, its router's arrival rate, its prefill, KV and decode
// req/s over W, its verdict and its SLO attainment. A value a pool does not have is shown as its
// reason, never as 0 nor as another pool's number. A deployment of one
// pool is the top of the page, so the panel shows from two pools on, or
// for one pool behind a router: the arrival rate the router counts is
// nowhere else on the page.

import * as f from "./fmt.js";

const POLL_MS = 5000; // as the advice panel: the snapshot is computed per request
const RATE = "requests_per_second_window";

function cell(text, cls, title) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  if (title) td.title = title;
  return td;
}

// rateCell is a stage's req/s over W, or why it is absent.
function rateCell(stage, obj) {
  const v = obj ? obj[RATE] : null;
  const why = (obj && obj.absent && obj.absent[RATE]) || "not known yet";
  const td = v != null ? cell(f.rate(v), "num") : cell("absent: " + why, "absent");
  td.dataset.stage = stage;
  return td;
}

// kvCell is the pool's KV req/s (bytes ÷ B_request) with its transfers/s
// beside it where the connector counts them, and, where one transfer
// carries other than B_request (prefix-cache hits), what the KV curve is.
function kvCell(p) {
  const td = rateCell("kv", p.kv);
  const x = p.kv ? p.kv.transfers_per_second : null;
  if (x != null) {
    const sub = document.createElement("div");
    sub.className = "sub";
    sub.dataset.transfers = String(x);
    sub.textContent = `${f.rate(x)} transfers/s`;
    td.append(sub);
  }
  if (p.kv_note) {
    const note = document.createElement("div");
    note.className = "kv-note";
    note.textContent = "bytes ÷ B_request, not a request count";
    note.title = p.kv_note;
    td.append(note);
  }
  return td;
}

// arrivalCell is the arrival rate the pool's router counted over W, with
// its P/D decisions where it exports them, or why there is none (no
// router in front of the pool).
function arrivalCell(p) {
  const r = p.router || {};
  const v = r.arrival_per_second;
  const why = (r.absent && r.absent.arrival_per_second) || "no router among the targets";
  const td = v != null ? cell(f.rate(v), "num") : cell("absent: " + why, "absent");
  td.dataset.stage = "arrival";
  const d = r.decode_only_per_second;
  if (v != null && d != null) {
    const sub = document.createElement("div");
    sub.className = "sub";
    sub.textContent = `${f.rate(d)} decode-only/s`;
    td.append(sub);
  }
  const rej = r.rejections_per_second;
  if (v != null && rej != null && rej > 0) {
    const sub = document.createElement("div");
    sub.className = "sub";
    sub.textContent = `${f.rate(rej)} rejected/s`;
    td.append(sub);
  }
  return td;
}

// bRequest is the pool's B_request and its source, or why it has none.
function bRequest(p) {
  const r = p.kv_request_bytes || {};
  if (r.bytes > 0) return cell(`${f.bytes(r.bytes)} (${r.source || "unset"})`, "", `${r.bytes.toLocaleString()} bytes, from ${r.source || "?"}`);
  return cell("not set", "absent", (p.reasons && p.reasons.kv_request_bytes) || "no B_request");
}

// sloCell is the pool's whole-request attainment (docs/advisor.md#the-whole-requests-slo):
// each SLO's fraction within its threshold, a range where only bounded,
// and the goodput, or why there is none.
function sloCell(p) {
  if (!p.slo) return cell(p.slo_absent ? "—" : "not computed", "muted", p.slo_absent || "");
  const req = p.slo.request;
  if (!req) return cell("—", "muted", "this server does not give the whole request's attainment");
  const pct = (m) => {
    if (m.within) return (m.within.at_least ? "≥ " : "") + f.pct(m.within.fraction);
    if (m.bound) return m.bound.min === m.bound.max ? f.pct(m.bound.min) : `${f.pct(m.bound.min)}–${f.pct(m.bound.max)}`;
    return "?";
  };
  const parts = (req.slos || []).map((m) => `${m.slo.toUpperCase()} ${pct(m)}`);
  if (!req.absent) {
    parts.push(req.bounded ? `goodput ${f.rate(req.goodput_min_requests_per_second)}–${f.rate(req.goodput_max_requests_per_second)} req/s`
      : `goodput ${f.rate(req.goodput_requests_per_second)} req/s`);
  }
  const titles = (req.slos || []).map((m) => `${m.slo.toUpperCase()} ≤ ${f.secs(m.threshold_seconds)}: ${m.absent || "from " + m.source}`);
  return cell(parts.join(" · "), "", titles.join("; "));
}

// kvTileNote says on the KV transfer tile which pools its req/s leaves
// out (a pool without KV bytes or without B_request), so that a KV number
// below prefill's under a balanced verdict is read for what it is.
function kvTileNote(pools) {
  const tile = document.getElementById("big-k");
  if (!tile) return;
  let note = tile.querySelector(".pools-note");
  if (!note) {
    note = document.createElement("div");
    note.className = "pools-note";
    tile.append(note);
  }
  const out = pools.filter((p) => p.kv && p.kv.requests_per_second_window == null);
  note.textContent = pools.length > 1 && out.length ? `${pools.length - out.length} of ${pools.length} pools; not ${out.map((p) => p.name).join(", ")}` : "";
  note.title = out.map((p) => `${p.name}: ${(p.kv.absent && p.kv.absent.requests_per_second_window) || "absent"}`).join("\n");
  tile.classList.toggle("partial-pools", note.textContent !== "");
}

// scrapeHealthNote says in the top row what the scrapes went through since
// the start: failed scrapes by reason and the targets that restarted
// (their counters went back), so that a flaky target or a restart is in
// view, not only in the instance table.
function scrapeHealthNote(h) {
  const meta = document.querySelector(".top .meta");
  if (!meta || !h) return;
  let el = document.getElementById("scrape-health");
  if (!el) {
    el = document.createElement("div");
    el.id = "scrape-health";
    meta.append(el);
  }
  const fails = Object.entries(h.failures || {}).sort((a, b) => b[1] - a[1]);
  const n = fails.reduce((acc, [, c]) => acc + c, 0);
  const parts = [];
  if (n) parts.push(`${n} scrape${n > 1 ? "s" : ""} failed on ${h.targets_failed} target${h.targets_failed > 1 ? "s" : ""} (${fails.map(([r, c]) => `${r.replace("_", " ")} ${c}`).join(", ")})`);
  if (h.restarted && h.restarted.length) parts.push(`restarted: ${h.restarted.join(", ")}`);
  el.textContent = parts.length ? parts.join("; ") + " since the start" : "no scrape failed, no restart since the start";
  el.className = parts.length ? "health bad" : "health muted";
  el.dataset.failed = String(n);
  el.dataset.restarted = (h.restarted || []).join(",");
}

// renderPools fills el from one snapshot body.
export function renderPools(el, snap) {
  const pools = snap.pools || [];
  kvTileNote(pools);
  scrapeHealthNote(snap.scrape_health);
  const routed = pools.some((p) => p.router && p.router.arrival_per_second != null);
  el.hidden = pools.length < 2 && !routed;
  el.dataset.pools = String(pools.length);
  if (el.hidden) return;
  const verdicts = new Map(((snap.verdict && snap.verdict.groups) || []).map((g) => [g.group, g]));
  const table = document.createElement("table");
  const head = table.createTHead().insertRow();
  for (const h of ["Pool", "Model", "B_request", "Arrival req/s", "Prefill req/s", "KV req/s", "Decode req/s", "Verdict", "SLO (whole request)"]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.append(th);
  }
  const body = table.createTBody();
  for (const p of pools) {
    const tr = body.insertRow();
    tr.dataset.pool = p.name;
    const v = verdicts.get(p.name);
    const verdict = cell(v ? v.headline : "no verdict yet", v ? "pv stage-" + v.stage : "muted",
      v ? [...(v.evidence || []), ...(v.traffic || [])].join("\n") : "");
    verdict.dataset.verdict = v ? v.stage : "";
    tr.append(
      cell(p.name, "name"),
      cell(p.model || "—", p.model ? "" : "muted", (p.reasons && p.reasons.model) || ""),
      bRequest(p),
      arrivalCell(p),
      rateCell("prefill", p.prefill),
      kvCell(p),
      rateCell("decode", p.decode),
      verdict,
      sloCell(p),
    );
    tr.lastChild.dataset.slo = "1";
  }
  const h2 = document.createElement("h2");
  h2.textContent = `Pools (${pools.length})`;
  el.replaceChildren(h2, table);
  el.dataset.ready = "1";
}

// startPools polls the snapshot's pools while the page is visible and not
// paused.
export function startPools(el, paused) {
  const poll = async () => {
    if (!paused() && document.visibilityState === "visible") {
      try {
        const r = await fetch("/api/v1/snapshot?instances=0");
        if (r.ok) renderPools(el, await r.json());
      } catch { /* the stream's status line already says we are offline */ }
    }
    setTimeout(poll, POLL_MS);
  };
  poll();
}
