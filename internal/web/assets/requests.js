// Requests joined from OpenTelemetry traces (/api/v1/requests,
// docs/traces.md): a table of the slowest or newest requests, and the
// waterfall of the one clicked — each phase on its own line, from the side
// it was read on, the inferred ones hatched. A phase the joiner could not
// know is listed with its reason, never drawn as 0.

import * as f from "./fmt.js";

const POLL_MS = 5000;
const PHASES = ["queue", "prefill", "kv_transfer", "decode_queue", "decode"];
const LABEL = { queue: "queue", prefill: "prefill", kv_transfer: "KV transfer", decode_queue: "queue on decode", decode: "decode" };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

// waterfall draws one request's intervals on a common scale.
export function waterfall(box, r) {
  box.replaceChildren();
  box.dataset.id = r.id;
  const head = el("div", "wf-head");
  head.append(el("b", null, r.id), el("span", "muted",
    ` ${r.legs}` + (r.prefill_instance ? ` · prefill ${r.prefill_instance}` : "") + (r.decode_instance ? ` · decode ${r.decode_instance}` : "") +
    ` · TTFT ${f.secs(r.ttft)} · E2E ${f.secs(r.e2e)}`));
  box.append(head);
  const end = Math.max(r.e2e || 0, ...r.waterfall.map((iv) => iv.end)) || 1;
  for (const iv of r.waterfall) {
    const row = el("div", "wf-row");
    const bar = el("div", `wf-bar ph-${iv.phase}` + (iv.inferred ? " inferred" : ""));
    bar.dataset.phase = iv.phase;
    bar.dataset.start = String(iv.start);
    bar.dataset.end = String(iv.end);
    if (iv.inferred) bar.dataset.inferred = "1";
    bar.style.left = `${(100 * Math.max(iv.start, 0)) / end}%`;
    bar.style.width = `${Math.max((100 * (iv.end - iv.start)) / end, 0.3)}%`;
    bar.title = `${LABEL[iv.phase]}: ${f.secs(iv.end - iv.start)} from ${f.secs(iv.start)}; read on ${iv.side}` + (iv.inferred ? " (inferred)" : "");
    const track = el("div", "wf-track");
    track.append(bar);
    row.append(el("span", "wf-label", LABEL[iv.phase] + (iv.inferred ? " *" : "")), track, el("span", "wf-val", f.secs(iv.end - iv.start)));
    box.append(row);
  }
  const absent = Object.entries(r.absent || {});
  if (absent.length) {
    const ul = el("ul", "wf-absent");
    for (const [ph, why] of absent) {
      const li = el("li", null, `${LABEL[ph] || ph}: ${why}`);
      li.dataset.phase = ph;
      ul.append(li);
    }
    box.append(ul);
  }
  if (r.waterfall.some((iv) => iv.inferred)) box.append(el("div", "muted", "* inferred from the gap between the two legs"));
}

// startRequests adds the requests section to parent and keeps it fresh.
export function startRequests(parent, paused) {
  const sec = el("section", "requests");
  sec.id = "requests";
  const bar = el("div", "fleetbar");
  const total = el("span", "muted");
  const h = el("h2", null, "Requests ");
  h.append(total);
  const sort = el("select");
  sort.id = "req-sort";
  for (const [v, t] of [["slowest", "slowest"], ["newest", "newest"]]) sort.append(new Option(t, v));
  const phase = el("select");
  phase.id = "req-phase";
  phase.append(new Option("by e2e", ""));
  for (const p of PHASES) phase.append(new Option("by " + LABEL[p], p));
  const at = el("span", "muted");
  at.id = "req-at";
  const clear = el("button", null, "any time");
  clear.hidden = true;
  const note = el("span", "why");
  note.id = "req-note";
  const sl = el("label", null, "Show ");
  sl.append(sort);
  bar.append(h, sl, phase, at, clear, note);
  const table = el("table");
  table.id = "requests-table";
  const wf = el("div", "waterfall");
  wf.id = "waterfall";
  const wrap = el("div", "tablewrap");
  wrap.append(table);
  sec.append(bar, wrap, wf);
  parent.append(sec);

  const state = { at: null, picked: null, rows: [], gen: 0 };
  async function load() {
    const q = new URLSearchParams({ sort: sort.value, limit: "20" });
    if (phase.value) q.set("phase", phase.value);
    const atQ = state.at;
    if (atQ) q.set("at", String(Math.round(atQ * 1000)));
    // Only the newest load renders: an earlier answer that comes late
    // (a poll before a click on the chart) must not replace it.
    const gen = ++state.gen;
    let body;
    try {
      const res = await fetch("/api/v1/requests?" + q);
      if (!res.ok) throw new Error(res.status + " " + (await res.text()));
      body = await res.json();
    } catch (e) {
      if (gen === state.gen) note.textContent = "requests: " + e.message;
      return;
    }
    if (gen !== state.gen) return;
    note.textContent = body.reason || "";
    total.textContent = body.total ? `${body.total}` : "";
    table.dataset.at = atQ ? String(atQ) : "";
    render(body.requests);
  }
  function render(rows) {
    state.rows = rows;
    table.replaceChildren();
    const thead = el("thead");
    const hr = el("tr");
    for (const t of ["request", "arrival", "legs", "E2E", "TTFT", ...PHASES.map((p) => LABEL[p]), "tokens in/out"]) hr.append(el("th", null, t));
    thead.append(hr);
    const tb = el("tbody");
    for (const r of rows) {
      const tr = el("tr");
      tr.dataset.id = r.id;
      tr.dataset.arrival = String(r.arrival);
      if (r.e2e != null) tr.dataset.e2e = String(r.e2e);
      if (r.id === state.picked) tr.className = "picked";
      const cell = (v, cls) => tr.append(el("td", cls, v));
      cell(r.id);
      cell(f.clock(r.arrival));
      cell(r.legs);
      // A missed SLO marks its cell and names the phase blamed for it.
      const missed = (name, v) => {
        const m = (r.slo_misses || []).find((x) => x.slo === name);
        const td = el("td", m ? "num missed" : "num", f.secs(v));
        if (m) {
          td.dataset.blame = m.phase || "";
          td.title = `over the ${name.toUpperCase()} SLO of ${f.secs(m.threshold_seconds)}: ` +
            (m.phase ? `${LABEL[m.phase]} took ${Math.round(100 * m.share)}%` : m.reason);
        }
        tr.append(td);
      };
      missed("e2e", r.e2e);
      missed("ttft", r.ttft);
      for (const p of PHASES) {
        const v = r.phases[p];
        const td = el("td", v == null ? "num absent" : "num", v == null ? "—" : f.secs(v));
        if (v == null && r.absent && r.absent[p]) td.title = r.absent[p];
        tr.append(td);
      }
      cell(`${r.prompt_tokens ?? "—"} / ${r.completion_tokens ?? "—"}`, "num");
      tr.addEventListener("click", () => pick(r.id));
      tb.append(tr);
    }
    table.append(thead, tb);
    const shown = rows.find((r) => r.id === state.picked);
    if (shown) waterfall(wf, shown);
  }
  function pick(id) {
    state.picked = id;
    const r = state.rows.find((x) => x.id === id);
    for (const tr of table.querySelectorAll("tbody tr")) tr.classList.toggle("picked", tr.dataset.id === id);
    if (r) waterfall(wf, r);
  }
  // show loads one request by id and draws its waterfall (a verdict's
  // example link).
  async function show(id) {
    try {
      const res = await fetch("/api/v1/requests?" + new URLSearchParams({ id }));
      if (!res.ok) throw new Error(res.status + " " + (await res.text()));
      const body = await res.json();
      if (!body.requests.length) throw new Error(`request ${id} is no longer kept`);
      state.picked = id;
      for (const tr of table.querySelectorAll("tbody tr")) tr.classList.toggle("picked", tr.dataset.id === id);
      waterfall(wf, body.requests[0]);
      wf.scrollIntoView({ block: "nearest" });
    } catch (e) {
      note.textContent = "requests: " + e.message;
    }
  }
  // The verdict's example requests come with the snapshot; they are
  // fetched at most every POLL_MS and drawn on each verdict.
  const ex = { list: [], at: 0, stage: "" };
  async function fetchExamples() {
    try {
      const res = await fetch("/api/v1/snapshot?instances=0");
      if (res.ok) ex.list = (await res.json()).verdict_examples || [];
    } catch (e) {
      ex.list = [];
    }
  }
  sort.addEventListener("change", load);
  phase.addEventListener("change", load);
  clear.addEventListener("click", () => { state.at = null; at.textContent = ""; clear.hidden = true; load(); });
  load();
  setInterval(() => { if (!paused() && !state.at) load(); }, POLL_MS);
  // inFlightAt lists the requests in flight at tSec (Unix seconds): the
  // stage chart calls it when a moment is clicked.
  return {
    // verdictExamples adds the verdict's example requests to its evidence
    // list ul: each opens its waterfall.
    verdictExamples(v, ul) {
      const now = Date.now();
      if (now - ex.at > POLL_MS || ex.stage !== v.stage) {
        ex.at = now;
        ex.stage = v.stage;
        fetchExamples().then(() => { if (ul.isConnected && ex.stage === v.stage) draw(); });
      }
      function draw() {
        ul.querySelector("li.examples")?.remove();
        const list = ex.list.filter((e) => e.phase);
        if (!list.length) return;
        const li = el("li", "examples", "example requests: ");
        li.id = "verdict-examples";
        list.forEach((e, i) => {
          const a = el("a", null, `${e.id} (${LABEL[e.phase]} ${f.secs(e.seconds)})`);
          a.href = "#requests";
          a.dataset.id = e.id;
          a.addEventListener("click", (ev) => { ev.preventDefault(); show(e.id); });
          li.append(...(i ? [", ", a] : [a]));
        });
        ul.append(li);
      }
      draw();
    },
    inFlightAt(tSec) {
      state.at = tSec;
      at.dataset.t = String(tSec);
      at.textContent = "in flight at " + f.clock(tSec);
      clear.hidden = false;
      load();
      sec.scrollIntoView({ block: "start" });
    },
  };
}

// linkStageChart makes a click on the stage chart list the requests in
// flight at the moment under the cursor.
export function linkStageChart(chart, reqs) {
  if (!chart || !chart.u) return;
  chart.u.over.addEventListener("click", (e) => {
    const u = chart.u;
    const i = u.posToIdx(e.offsetX);
    if (i != null && u.data[0][i] != null) reqs.inFlightAt(u.data[0][i]);
  });
}
