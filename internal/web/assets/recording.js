// The time-range control of a recorded run (ptdmon replay, docs/runs.md):
// which part of the run the charts show. A live serve has no recording to
// replay, and the control stays hidden.
import * as f from "./fmt.js";

export class Recording {
  constructor(el, onChange) {
    this.el = el;
    this.onChange = onChange;
    this.active = false;
    this.from = 0; // fractions of the run held, 0..1
    this.to = 1;
  }

  // start asks the server whether it replays a recording; true if it does.
  async start() {
    const r = await fetch("/api/v1/record").catch(() => null);
    if (!r || !r.ok) return false;
    const s = await r.json();
    if (!s.replay) return false;
    this.active = true;
    const run = s.run || {};
    const hash = (run.config_hash || "").slice(0, 12);
    const marks = (run.annotations || []).map((a) => `${f.clock(Date.parse(a.time) / 1000)} ${a.text}`).join(" · ");
    this.el.innerHTML = "";
    const head = document.createElement("span");
    head.className = "rec-head";
    head.textContent = `Recorded run · ptdmon ${run.version || "?"} · config ${hash || "?"} · ${(run.targets || []).length} targets`;
    head.title = marks;
    this.fromIn = this.slider("rec-from", 0, "Start of the span shown");
    this.toIn = this.slider("rec-to", 1000, "End of the span shown");
    this.label = document.createElement("span");
    this.label.id = "rec-span";
    this.label.className = "muted";
    const whole = document.createElement("button");
    whole.id = "rec-whole";
    whole.textContent = "Whole run";
    whole.addEventListener("click", () => this.set(0, 1));
    this.el.append(head, " from ", this.fromIn, " to ", this.toIn, " ", whole, " ", this.label);
    this.el.hidden = false;
    document.documentElement.dataset.recording = "1";
    return true;
  }

  slider(id, value, title) {
    const s = document.createElement("input");
    Object.assign(s, { type: "range", id, min: 0, max: 1000, value, title });
    s.addEventListener("input", () => this.set(this.fromIn.value / 1000, this.toIn.value / 1000));
    return s;
  }

  // set chooses the span, as fractions of the run; the end stays after
  // the start.
  set(from, to) {
    if (to <= from) [from, to] = from === this.from ? [from, Math.min(1, from + 0.001)] : [Math.max(0, to - 0.001), to];
    this.from = from;
    this.to = to;
    this.fromIn.value = Math.round(from * 1000);
    this.toIn.value = Math.round(to * 1000);
    this.onChange();
  }

  // view returns the points of the chosen span, or null when no recording
  // is replayed (the live range applies).
  view(store) {
    if (!this.active || !store.pts.length) return null;
    const first = store.pts[0].t, last = store.latest().t;
    const a = first + (last - first) * this.from, b = first + (last - first) * this.to;
    const pts = store.pts.filter((p) => p.t >= a && p.t <= b);
    this.label.textContent = `${f.clock(a)} – ${f.clock(b)}, ${pts.length} points`;
    document.documentElement.dataset.viewFrom = String(a);
    document.documentElement.dataset.viewTo = String(b);
    return pts;
  }
}
