// Where TTFT goes: for each pool, its time to first token split into
// phases (the router's own time, queue, prefill compute, bootstrap and
// allocation, the router's hand-over between the legs, KV transfer, first
// decode step) and what no phase times (untimed) as a stacked chart over
// time, beside the whole request's TTFT and, where a router times it, the
// prefill leg's end as the router sees it, from the ttft_phases of
// /api/v1/snapshot's pools (docs/pools.md). A phase without a source is no
// band, never a zero band or one folded into its neighbour; the line under
// the chart says why. The chart shares the other charts' time axis.

/* global uPlot */
import * as f from "./fmt.js";
import { timeAxis, sharedRange } from "./charts.js";

const PHASES = [
  ["router_seconds", "router", "#9c755f"],
  ["queue_seconds", "queue", "#4e79a7"],
  ["prefill_seconds", "prefill", "#59a14f"],
  ["bootstrap_seconds", "bootstrap + alloc", "#b07aa1"],
  ["handover_seconds", "hand-over", "#edc948"],
  ["kv_transfer_seconds", "KV transfer", "#f28e2b"],
  ["first_decode_step_seconds", "first decode step", "#e15759"],
  ["untimed_seconds", "untimed", "#bab0ac"],
];
const KEEP = 720; // polls kept per pool: an hour at 5 s

// few: the first polls are dots; a line needs two.
const few = (u) => u.data[0].length < 3;

// chartWidth is the width of the page's content.
const chartWidth = () => Math.max(300, ((document.querySelector("main") || document.body).clientWidth || 640) - 40);

const secs = (v) => (v == null ? "absent" : v < 1 ? (v * 1000).toPrecision(3) + " ms" : v.toPrecision(3) + " s");

// PoolChart is one pool's stacked chart and its absent phases.
class PoolChart {
  constructor(parent, name) {
    this.el = document.createElement("div");
    this.el.className = "phases-pool";
    this.el.dataset.phasesPool = name;
    const h = document.createElement("div");
    h.className = "k";
    h.textContent = `Where TTFT goes — ${name}`;
    this.head = h;
    this.name = name;
    this.plot = document.createElement("div");
    this.absent = document.createElement("div");
    this.absent.className = "muted";
    this.el.append(h, this.plot, this.absent);
    parent.append(this.el);
    this.t = [];
    this.raw = PHASES.map(() => []);
    this.ttft = [];
    this.leg = [];
    this.legRaw = [];
    const series = [{ value: (u, v) => (v == null ? "" : f.clock(v)) }];
    PHASES.forEach(([, label, color], i) => series.push({
      label, stroke: color, fill: color + "99", width: 1, points: { show: few }, spanGaps: false,
      // The legend says the phase's own time, not the stack's height.
      value: (u, v, si, di) => secs(this.rawAt(i, di)),
    }));
    series.push({ label: "TTFT, whole request", stroke: "#222", dash: [4, 3], width: 1.25, points: { show: few },
      value: (u, v, si, di) => secs(di == null ? this.ttft[this.ttft.length - 1] : this.ttft[di]) });
    // The prefill leg as a router times it ends at the router phase plus
    // the leg: a check of the engines' queue and prefill from outside.
    series.push({ label: "prefill leg's end (router)", stroke: "#59a14f", dash: [1, 3], width: 1.5, points: { show: few },
      value: (u, v, si, di) => secs(di == null ? this.legRaw[this.legRaw.length - 1] : this.legRaw[di]) });
    // Each band fills from its phase's top down to the top of the stack
    // beneath it.
    const bands = PHASES.slice(1).map((_, i) => ({ series: [i + 2, i + 1] }));
    this.u = new uPlot({
      width: chartWidth(), height: 140,
      legend: { live: true }, cursor: { sync: { key: "ptd" }, drag: { x: false, y: false } },
      // The other charts' span where they have one, else a minute at
      // least, from the polls' own times: uPlot widens a single point's
      // range to months.
      scales: { x: { time: true, range: () => sharedRange(this.t[0], this.t[this.t.length - 1]) }, y: { range: (u, min, max) => uPlot.rangeNum(0, max > 0 ? max : 1, 0.1, true) } },
      axes: [timeAxis(), { size: 58, label: "seconds", labelSize: 14 }],
      series, bands,
    }, [[], ...PHASES.map(() => []), [], []], this.plot);
    this.el._u = this.u;
  }

  rawAt(i, di) {
    const col = this.raw[i];
    return di == null ? col[col.length - 1] : col[di];
  }

  add(t, ph) {
    // A poll between two ticks (or of a replay served at once) sees the
    // same point again: one sample per point.
    if (this.t.length && this.t[this.t.length - 1] === t) return;
    this.t.push(t);
    PHASES.forEach(([k], i) => this.raw[i].push(ph ? ph[k] : null));
    this.ttft.push(ph ? ph.ttft_seconds : null);
    const leg = ph ? ph.router_prefill_leg_seconds : null;
    this.legRaw.push(leg);
    this.leg.push(leg == null ? null : leg + ((ph && ph.router_seconds) || 0));
    if (this.t.length > KEEP) {
      this.t.shift();
      this.raw.forEach((c) => c.shift());
      this.ttft.shift();
      this.leg.shift();
      this.legRaw.shift();
    }
    // Stack: each phase on top of the present ones beneath it; an absent
    // phase draws nothing.
    const stacked = PHASES.map(() => []);
    for (let j = 0; j < this.t.length; j++) {
      let acc = 0;
      PHASES.forEach((_, i) => {
        const v = this.raw[i][j];
        if (v == null) { stacked[i].push(i === 0 ? null : stacked[i - 1][j]); return; }
        acc += v;
        stacked[i].push(acc);
      });
    }
    this.u.setData([this.t, ...stacked, this.ttft, this.leg]);
    const src = ph && ph.ttft_source;
    this.head.textContent = `Where TTFT goes — ${this.name}` + (src ? ` · TTFT of the whole request, from ${src}` : ph && ph.absent && ph.absent.ttft_seconds ? ` · TTFT: ${ph.absent.ttft_seconds}` : "");
    this.el.dataset.ttftSource = src || "";
    const why = PHASES.filter(([k]) => !ph || ph[k] == null).map(([k, label]) => `${label}: ${(ph && ph.absent && ph.absent[k]) || "not in the response"}`);
    this.absent.textContent = why.length ? "absent — " + why.join("; ") : "";
    this.el.dataset.absent = PHASES.filter(([k]) => !ph || ph[k] == null).map(([k]) => k).join(",");
  }
}

// hasPhase says whether a pool's sources time any phase.
const hasPhase = (ph) => ph && PHASES.some(([k]) => ph[k] != null);

// Phases keeps one chart per pool inside el, from the first snapshot in
// which the pool has a phase; the pools without any are named in a line.
export class Phases {
  constructor(el) {
    this.el = el;
    this.charts = new Map();
    this.none = document.createElement("div");
    this.none.className = "muted";
    this.el.append(this.none);
  }

  // add takes the pools of one snapshot taken at t (seconds).
  add(t, pools) {
    const none = [];
    this.el.hidden = false; // the charts take the width they are shown at
    for (const p of pools || []) {
      let c = this.charts.get(p.name);
      if (!c && hasPhase(p.ttft_phases)) {
        c = new PoolChart(this.el, p.name);
        this.charts.set(p.name, c);
      }
      if (c) c.add(t, p.ttft_phases);
      else none.push(p.name);
    }
    this.none.dataset.phasesNone = none.join(",");
    this.none.textContent = none.length ? `Where TTFT goes: no instance of ${none.join(", ")} exports phase histograms` : "";
    this.el.hidden = this.charts.size === 0 && none.length === 0;
  }
}
