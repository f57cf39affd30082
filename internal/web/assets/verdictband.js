// The verdict timeline: which stage limited the deployment at each past
// point, drawn as a coloured band along the top of the stage chart. History
// comes as spans from /api/v1/series ("verdicts"); every stream event
// carries the verdict at its own point.

const COLOURS = {
  balanced: "#a8a8a8", prefill: "#1f6fd1", kv: "#e8710a", admission: "#8e44ad",
  decode: "#1e9e4a", mixed: "#c0392b", insufficient: "#e6e6e6",
};
const HEIGHT = 6; // CSS pixels

export class VerdictBand {
  constructor() {
    this.runs = []; // {from, to, stage} in unix seconds, oldest first, not overlapping
  }

  // addSpans takes the spans of a series response.
  addSpans(spans) {
    for (const s of spans || []) this.add(Date.parse(s.from) / 1000, Date.parse(s.to) / 1000, s.stage);
  }

  // addPoint takes one live point's verdict.
  addPoint(t, stage) {
    if (stage) this.add(t, t, stage);
  }

  add(from, to, stage) {
    const last = this.runs[this.runs.length - 1];
    if (last && from <= last.to) {
      // Overlap (a reloaded range): keep the newer information.
      this.runs = this.runs.filter((r) => r.to < from || r.from > to);
      this.runs.push({ from, to, stage });
      this.runs.sort((a, b) => a.from - b.from);
    } else if (last && last.stage === stage) {
      last.to = to;
    } else {
      this.runs.push({ from, to, stage });
    }
    if (this.runs.length > 4000) this.runs.splice(0, this.runs.length - 4000);
  }

  // stageAt returns the verdict stage at unix second t, or "".
  stageAt(t) {
    for (let i = this.runs.length - 1; i >= 0; i--) {
      const r = this.runs[i];
      if (r.from <= t && t <= r.to + 1) return r.stage;
    }
    return "";
  }

  // summary lists the stages in the shown range, oldest first, for tests
  // and the tooltip ("balanced kv kv" collapses to "balanced,kv").
  summary(from, to) {
    const out = [];
    for (const r of this.runs) {
      if (r.to < from || r.from > to) continue;
      if (out[out.length - 1] !== r.stage) out.push(r.stage);
    }
    return out;
  }

  // draw is a uPlot "draw" hook: one rectangle per run, across the top of
  // the plotting area; each run reaches to the next point.
  draw(u) {
    const ctx = u.ctx;
    const { top } = u.bbox;
    const h = HEIGHT * devicePixelRatio;
    const min = u.scales.x.min, max = u.scales.x.max;
    if (min == null || max == null) return;
    ctx.save();
    ctx.globalAlpha = 0.5; // lighter than the curves, which share the hues
    for (let i = 0; i < this.runs.length; i++) {
      const r = this.runs[i];
      const next = this.runs[i + 1];
      const end = next ? Math.min(next.from, r.to + 1) : r.to + 1;
      if (end < min || r.from > max) continue;
      const x0 = u.valToPos(Math.max(r.from, min), "x", true);
      const x1 = u.valToPos(Math.min(end, max), "x", true);
      ctx.fillStyle = COLOURS[r.stage] || "#999";
      ctx.fillRect(x0, top, Math.max(1, x1 - x0), h);
    }
    ctx.restore();
    const el = u.root.closest("section");
    if (el) el.dataset.verdicts = this.summary(min, max).join(",");
  }
}
