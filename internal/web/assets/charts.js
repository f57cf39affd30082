// Builds one uPlot chart per entry of CHARTS, all on one time axis with a
// shared cursor, and fills them from the store. uPlot draws everything.
/* global uPlot */
import { CHARTS } from "./series.js";
import { pos, reason } from "./store.js";
import * as f from "./fmt.js";

const FMT = {
  rate: f.rate, count: f.count, si: (v) => f.si(v), secs: f.secs,
  pct: (v) => (v == null ? "—" : Math.round(v * 100) + "%"),
};

// axisFmt labels one axis in one unit: a latency axis from 0 to 2 s reads
// "0 ms … 2000 ms" or "0 s … 2 s", never both.
function axisFmt(kind) {
  if (kind === "secs") {
    return (u, vals) => {
      const max = Math.max(...vals.map(Math.abs));
      return max < 1 ? vals.map((v) => +(v * 1000).toPrecision(3) + " ms") : vals.map((v) => +v.toPrecision(3) + " s");
    };
  }
  if (kind === "pct") return (u, vals) => vals.map((v) => Math.round(v * 100) + "%");
  const fmt = FMT[kind];
  return (u, vals) => vals.map((v) => fmt(v));
}

// Tick steps. Time: whole seconds and up, so that the first seconds of a
// run do not label several ticks with the same second. Counts (queues,
// running requests): whole numbers only.
const TIME_INCRS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
const COUNT_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];

const pad = (n) => String(n).padStart(2, "0");
const hms = (u, vals) => vals.map((v) => {
  const d = new Date(v * 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
});
const SYNC = uPlot.sync("ptd");

// timeAxis is the x axis every time chart draws: the same ticks and
// labels, so that charts read side by side.
export const timeAxis = () => ({ stroke: "#444", grid: { stroke: "#eee" }, ticks: { stroke: "#ddd" }, size: 28, space: 70, incrs: TIME_INCRS, values: hms });

// shown is the span the charts show now, [first, last] in seconds.
let shown = null;

// sharedRange is the x range of a chart drawn beside the others: their
// span (to its newest point), else a minute at least.
export function sharedRange(min, max) {
  if (shown) return [shown[0], max > shown[1] ? max : shown[1]];
  return [Math.min(min, max - 60), max];
}

export class Charts {
  // band, when given, draws the verdict timeline on the stage chart.
  constructor(root, band) {
    this.list = CHARTS.map((spec) => new Chart(spec, root, spec.id === "rates" ? band : null));
    window.addEventListener("resize", () => this.resize());
  }
  resize() { for (const c of this.list) c.resize(); }
  // update redraws every chart from pts (oldest first) under ctx.
  update(pts, ctx) {
    ctx.latencyStage = pickLatencyStage(pts);
    if (pts.length) shown = [pts[0].t, pts[pts.length - 1].t];
    for (const c of this.list) c.update(pts, ctx);
  }
  // columns returns what the charts show, for the CSV download.
  columns() {
    const heads = ["time"];
    const cols = [];
    const first = this.list[0];
    if (!first.data) return { heads, rows: [] };
    for (const c of this.list) {
      c.spec.curves.forEach((cv, i) => {
        heads.push(`${c.spec.title} / ${cv.label} (${c.spec.unit})`);
        cols.push(c.data[i + 1]);
      });
    }
    const rows = first.data[0].map((t, r) => [new Date(t * 1000).toISOString(), ...cols.map((col) => col[r])]);
    return { heads, rows };
  }
}

// pickLatencyStage prefers decode's histogram when it has any value shown.
function pickLatencyStage(pts) {
  const out = {};
  for (const m of ["ttft", "itl", "e2e"]) {
    const j = pos("d", m + "_p50");
    out[m] = pts.some((pt) => pt.d[j] != null) ? "d" : "p";
  }
  return out;
}

class Chart {
  constructor(spec, root, band) {
    this.spec = spec;
    const box = document.createElement("section");
    box.className = "chart" + (spec.wide ? " wide" : "");
    box.id = "chart-" + spec.id;
    const h = document.createElement("h3");
    h.textContent = spec.title;
    this.src = document.createElement("span");
    this.src.className = "src";
    h.append(this.src);
    this.plotEl = document.createElement("div");
    this.why = document.createElement("div");
    this.why.className = "why";
    box.append(h, this.plotEl, this.why);
    root.append(box);
    this.box = box;
    this.pts = [];
    this.hoverIdx = null;
    const fmt = FMT[spec.fmt];
    // Every plotted quantity is ≥ 0: axes start at zero so that noise on a
    // flat rate does not look like a swing.
    const fromZero = (u, min, max) => uPlot.rangeNum(0, max > 0 ? max : 1, 0.1, true);
    const scales = { x: { time: true }, y: { range: spec.range || fromZero } };
    // With a right axis, each axis takes the colour of its curves so that
    // which scale a line reads on is never a guess.
    const leftColor = spec.right ? spec.curves.find((c) => !c.scale).color : "#444";
    const axes = [
      timeAxis(),
      { stroke: leftColor, grid: { stroke: "#eee" }, ticks: { stroke: "#ddd" }, size: 58, label: spec.unit, labelSize: 14, values: axisFmt(spec.fmt), ...(spec.fmt === "count" ? { incrs: COUNT_INCRS } : {}) },
    ];
    if (spec.right) {
      const r = spec.right;
      // headroom > 1 keeps a right-axis curve below a proportional left one
      // instead of on top of it.
      const k = r.headroom || 1;
      scales.n = { range: (u, min, max) => fromZero(u, min, max * k) };
      const rightColor = spec.curves.find((c) => c.scale === "n").color;
      axes.push({ scale: "n", side: 1, stroke: rightColor, grid: { show: false }, size: 52, label: r.unit, labelSize: 14, values: axisFmt(r.fmt) });
    }
    this.opts = {
      width: this.width(),
      height: spec.height || 150,
      cursor: { sync: { key: SYNC.key }, drag: { x: false, y: false }, points: { size: 5 } },
      legend: { live: true },
      scales,
      axes,
      series: [
        { value: (u, v) => (v == null ? "" : f.clock(v)) },
        ...spec.curves.map((c, i) => ({
          label: c.label,
          stroke: c.color,
          width: c.width || 1.25,
          dash: c.dash,
          scale: c.scale || "y",
          spanGaps: false,
          points: { show: false },
          // Not hovering: the newest value, as the big numbers do.
          value: (u, v, si, di) => {
            const f2 = c.scale === "n" ? FMT[spec.right.fmt] : fmt;
            if (di == null) {
              const col = u.data[si];
              v = col && col.length ? col[col.length - 1] : null;
              return v == null ? "absent" : f2(v);
            }
            return v == null ? "absent" : f2(v);
          },
        })),
      ],
      hooks: { setCursor: [(u) => { this.hoverIdx = u.cursor.idx; this.explain(); }] },
    };
    if (band) this.opts.hooks.draw = [(u) => band.draw(u)];
    this.u = new uPlot(this.opts, [[], ...spec.curves.map(() => [])], this.plotEl);
    box._u = this.u; // for the browser tests, as a pool's phases chart keeps its own
    SYNC.sub(this.u);
  }

  width() { return Math.max(300, this.box ? this.box.clientWidth - 16 : 600); }
  resize() { this.u.setSize({ width: this.width(), height: this.opts.height }); }

  update(pts, ctx) {
    const cs = this.spec.curves;
    const n = pts.length;
    const data = [new Array(n), ...cs.map(() => new Array(n))];
    this.reasons = cs.map(() => new Array(n));
    for (let r = 0; r < n; r++) {
      const pt = pts[r];
      data[0][r] = pt.t;
      cs.forEach((c, i) => {
        let v = null, code = null, why;
        if (ctx.filter && !c.one) why = "a stage total; not kept per instance";
        else [v, code, why] = (ctx.filter ? c.one : c.all)(pt, ctx);
        data[i + 1][r] = v;
        if (v == null) this.reasons[i][r] = why || reason(pt, code) || "absent";
      });
    }
    this.data = data;
    this.pts = pts;
    const counts = cs.map((c, i) => data[i + 1].filter((v) => v != null).length);
    this.box.dataset.points = counts.join(",");
    this.box.dataset.labels = cs.map((c) => c.label).join(",");
    this.src.textContent = this.spec.latency ? ` (${ctx.latencyStage[this.spec.latency] === "d" ? "decode" : "prefill"} instances)`
      : this.spec.window ? this.spec.window(ctx) : "";
    if (this.box.offsetWidth && Math.abs(this.u.width - this.width()) > 2) this.resize();
    this.u.setData(data);
    this.explain();
  }

  // explain says why curves have gaps: at the cursor when hovering, else
  // at the newest point.
  explain() {
    if (!this.reasons) return;
    const n = this.pts.length;
    const r = this.hoverIdx != null ? this.hoverIdx : n - 1;
    const byWhy = new Map();
    this.spec.curves.forEach((c, i) => {
      const why = r >= 0 ? this.reasons[i][r] : null;
      if (why) byWhy.set(why, [...(byWhy.get(why) || []), c.label]);
    });
    const parts = [...byWhy].map(([why, labels]) => `${labels.join(", ")}: ${why}`);
    const txt = parts.length ? (this.hoverIdx != null ? "At cursor — absent " : "Absent now — ") + parts.join("; ") : "";
    this.why.textContent = txt;
    this.why.title = txt;
  }
}
