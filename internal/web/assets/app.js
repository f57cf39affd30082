// ptdmon dashboard: history from /api/v1/series, then one point per tick
// from /api/v1/stream. No framework; uPlot draws the charts.
//
// Per-instance data never travels unless it is on screen: the charts load
// and stream the stage-level points only (instances=0), or those plus the
// one picked instance (target=NAME); the table asks /api/v1/instances for
// the rows it shows.
import { Decoder, Store, setFields, pos, reason } from "./store.js";
import { Charts } from "./charts.js";
import { Table } from "./table.js";
import { VerdictBand } from "./verdictband.js";
import { startAdvice } from "./advice.js";
import { startPools } from "./pools.js";
import { startRequests, linkStageChart } from "./requests.js";
import { Recording } from "./recording.js";
import { startFailures } from "./failures.js";
import * as f from "./fmt.js";

const $ = (id) => document.getElementById(id);
const state = {
  // "w" windowed (over W) or "i" instant rates, for all three curves. W is
  // the default: at 1 s a single completion more or less swings the
  // instant rate by 1 req/s.
  mode: "w",
  range: 300, // seconds shown
  filter: null, // instance target, or null for the whole deployment
  paused: false,
  bytesPerRequest: 0,
  window: 5,
  loaded: 0, // seconds of history fetched
  gen: 0, // bumped when the picked instance changes; older loads are dropped
  es: null, // the event stream
};
const store = new Store(3600);
const band = new VerdictBand();
const charts = new Charts($("charts"), band);
const table = new Table($("instances"),
  { q: $("fleet-q"), status: $("fleet-status"), by: $("fleet-by"), counts: $("fleet-counts"), total: $("fleet-total"), note: $("fleet-note") },
  (t) => pick(state.filter === t ? null : t), () => state.paused);
const rec = new Recording($("recording"), () => render());

// scope is the query that limits the history and the stream to what the
// charts show.
const scope = () => (state.filter ? "target=" + encodeURIComponent(state.filter) : "instances=0");

function ctx() {
  return { mode: state.mode, filter: state.filter, bytesPerRequest: state.bytesPerRequest, window: state.window };
}

function render() {
  const last = store.latest();
  if (!last) return;
  // A replayed recording shows the span its control chooses.
  const pts = rec.view(store) || store.since(last.t - state.range);
  charts.update(pts, ctx());
  renderTop(last);
  document.documentElement.dataset.points = String(pts.length);
  document.documentElement.dataset.ready = "1";
  // Data is on screen: the badge no longer says the page is connecting (the
  // stream's own handlers say when it breaks).
  const status = $("conn");
  if (status.dataset.state === "connecting") setStatus("live");
}

function setStatus(s) {
  const el = $("conn");
  el.dataset.state = s;
  el.textContent = { live: "live", reconnecting: "reconnecting…", connecting: "connecting…" }[s];
  el.className = "conn" + (s === "live" ? " live" : s === "reconnecting" ? " down" : "");
  // A replayed recording is connected, but not live: the badge says so.
  if (s === "live" && rec.active) {
    el.textContent = "replay";
    el.className = "conn replay";
  }
}

// renderTop writes the current rates in large type and the verdict banner.
function renderTop(pt) {
  const field = state.mode === "w" ? "requests_per_second_window" : "requests_per_second";
  const unit = state.mode === "w" ? `req/s over ${state.window} s` : "req/s instant";
  for (const [sec, id, upIdx] of [["p", "big-p", 0], ["k", "big-k", 2], ["d", "big-d", 4]]) {
    const j = pos(sec, field);
    const v = pt[sec][j];
    const el = $(id);
    el.querySelector(".v").textContent = f.rate(v);
    el.querySelector(".u").textContent = unit;
    el.title = v == null ? "absent: " + reason(pt, sec + j) : "";
    el.classList.toggle("absent", v == null);
    const [n, up] = [pt.u[upIdx], pt.u[upIdx + 1]];
    el.querySelector(".up").textContent = n ? `${up}/${n} instances up` : "no instances";
    el.classList.toggle("partial", n > 0 && up < n);
  }
  $("flavour").textContent = state.mode === "w" ? `over W = ${state.window} s` : "instant (adjacent samples)";
  $("updated").textContent = f.clock(pt.t);
  if (pt.v) renderVerdict(pt.v);
  // Every target down is said in words: no verdict can be made from nothing.
  const [n, up] = [pt.u[0] + pt.u[4], pt.u[1] + pt.u[5]];
  const down = n > 0 && up === 0;
  document.documentElement.dataset.allDown = down ? "1" : "";
  if (down) {
    $("verdict-head").textContent = `All ${n} targets are down`;
    $("verdict-meta").textContent = "no scrape has succeeded recently; see the Status column below";
  }
}

function renderVerdict(v) {
  const el = $("verdict");
  el.dataset.stage = v.stage;
  el.className = "verdict stage-" + v.stage;
  $("verdict-head").textContent = v.headline;
  $("verdict-meta").textContent = v.samples ? `over the last ${Math.round(v.window_seconds)} s, ${v.samples} samples` : "";
  const ul = $("verdict-evidence");
  ul.replaceChildren(...[...(v.evidence || []), ...(v.notes || []).map((n) => "note: " + n)].map((e) => {
    const li = document.createElement("li");
    li.textContent = e;
    if (e.startsWith("note: ")) li.className = "note";
    return li;
  }));
  if (state.requests) state.requests.verdictExamples(v, ul);
}

// pick shows one instance (or, with null, the whole deployment) in the
// charts: its history replaces what the charts hold, and the stream follows
// it alone.
async function pick(target) {
  state.filter = target;
  $("filter").textContent = target ? `Charts show instance ${target}` : "Charts show the whole deployment";
  $("clear-filter").hidden = !target;
  document.documentElement.dataset.filter = target || "";
  table.setPicked(target);
  const gen = ++state.gen;
  if (state.es) state.es.close();
  state.es = null;
  // The held points have no row for the picked instance (or only the
  // previous one's): the store is refilled from the new scope's history,
  // and keeps the held points if that fails.
  const held = store.pts;
  store.pts = [];
  try {
    await loadHistory({ secs: Math.max(state.range, state.loaded) }, gen);
  } catch (e) {
    console.error(e);
    if (gen === state.gen && !store.pts.length) store.pts = held;
    if (gen === state.gen && target && e.status === 404) {
      // The instance left the ledger between the table's poll and the click.
      await pick(null);
      $("filter").textContent = `${target} is no longer known; charts show the whole deployment`;
      return;
    }
  }
  if (gen !== state.gen) return;
  document.documentElement.dataset.picked = target || "";
  render();
  connect();
}

// loadHistory fetches the points of the last `secs` seconds (or those after
// `sinceMs`) in the compact encoding.
async function loadHistory({ secs, sinceMs } = {}, gen = state.gen) {
  const q = sinceMs ? `since=${sinceMs}` : `last=${secs}`;
  const r = await fetch(`/api/v1/series?format=compact&${q}&${scope()}`);
  if (!r.ok) throw Object.assign(new Error(`series: ${r.status} ${(await r.text()).trim()}`), { status: r.status });
  const s = await r.json();
  if (gen !== state.gen) return; // another instance was picked meanwhile
  setFields(s.fields);
  state.window = s.window_seconds;
  const dec = new Decoder();
  const pts = s.points.map((c) => dec.decode(c));
  band.addSpans(s.verdicts);
  if (!sinceMs && store.pts.length && pts.length && pts[0].t < store.pts[0].t) {
    // A longer range: rebuild so older points come first.
    const newer = store.pts.filter((p) => p.t > pts[pts.length - 1].t);
    store.pts = [];
    for (const p of [...pts, ...newer]) store.add(p);
  } else {
    for (const p of pts) store.add(p);
  }
}

// loadSnapshot reads B_request and its source (the snapshot without its
// instances: the table brings those it shows).
async function loadSnapshot() {
  const r = await fetch("/api/v1/snapshot?instances=0");
  if (!r.ok) return;
  const s = await r.json();
  const kv = s.kv_request_bytes || {};
  state.bytesPerRequest = kv.bytes || 0;
  $("breq").textContent = kv.bytes ? `${f.bytes(kv.bytes)} (${kv.bytes.toLocaleString()} bytes)` : "not set";
  $("breq-src").textContent = kv.source || "unset";
}

function connect() {
  const gen = state.gen;
  const es = new EventSource("/api/v1/stream?" + scope());
  state.es = es;
  let dec = new Decoder();
  let broken = false;
  es.onopen = async () => {
    setStatus("live");
    document.documentElement.dataset.sse = "open";
    dec = new Decoder(); // a new connection sends the names again
    if (broken) {
      broken = false;
      const last = store.latest();
      if (last) await loadHistory({ sinceMs: Math.floor(last.t * 1000) }, gen).catch(() => {});
    }
  };
  es.onerror = () => {
    broken = true;
    setStatus("reconnecting");
    document.documentElement.dataset.sse = "reconnecting";
  };
  es.addEventListener("point", (ev) => {
    if (gen !== state.gen) return;
    const pt = dec.decode(JSON.parse(ev.data));
    if (pt.v) band.addPoint(pt.t, pt.v.stage);
    if (store.add(pt) && !state.paused) render();
  });
}

function csv() {
  const { heads, rows } = charts.columns();
  const q = (s) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = [heads.map(q).join(","), ...rows.map((r) => r.map((v) => (v == null ? "" : String(v))).join(","))];
  const blob = new Blob([lines.join("\n") + "\n"], { type: "text/csv" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  const scope = state.filter ? "-" + state.filter : "";
  a.download = `ptdmon${scope}-${new Date().toISOString().replace(/[:.]/g, "-")}.csv`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

function wire() {
  for (const b of document.querySelectorAll("[data-mode]")) {
    b.addEventListener("click", () => {
      state.mode = b.dataset.mode;
      for (const o of document.querySelectorAll("[data-mode]")) o.classList.toggle("on", o === b);
      table.setMode(state.mode, state.window);
      render();
    });
  }
  $("range").addEventListener("change", async (e) => {
    state.range = Number(e.target.value);
    if (state.range > state.loaded) {
      await loadHistory({ secs: state.range }).catch(() => {});
      state.loaded = state.range;
    }
    render();
  });
  $("pause").addEventListener("click", () => {
    state.paused = !state.paused;
    $("pause").textContent = state.paused ? "Resume" : "Pause";
    $("pause").classList.toggle("on", state.paused);
    document.documentElement.dataset.paused = state.paused ? "1" : "";
    if (!state.paused) { render(); table.refresh(); }
  });
  $("csv").addEventListener("click", csv);
  $("clear-filter").addEventListener("click", () => pick(null));
}

async function main() {
  wire();
  // The table, B_request and the history load side by side: each is small.
  table.start();
  const replay = await rec.start();
  await Promise.all([
    loadSnapshot().catch(() => {}),
    loadHistory(replay ? { sinceMs: 1 } : { secs: state.range }).catch((e) => console.error(e)),
  ]);
  state.loaded = state.range;
  table.setMode(state.mode, state.window);
  render();
  connect();
  startAdvice($("advice"), () => state.paused);
  startFailures($("pools"), () => state.paused); // under the charts, after the pools
  startPools($("pools"), () => state.paused);
  state.requests = startRequests(document.querySelector("main"), () => state.paused);
  linkStageChart(charts.list.find((c) => c.spec.id === "rates"), state.requests);
}

main();
