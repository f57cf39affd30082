// The advice panel: instances per stage, KV bandwidth and P:D for the
// observed arrival rate, and the SLO attainment over the window, from
// /api/v1/advice (docs/advisor.md). A value the advisor does not know yet is
// shown as its reason, never as 0.

import * as f from "./fmt.js";

const POLL_MS = 5000;

// why returns the reason an advice value is absent.
const why = (obj, key) => (obj && obj.absent && obj.absent[key]) || "not known yet";

function stage(s) {
  if (!s) return { text: "—", title: "" };
  if (s.instances != null) return { text: String(s.instances), title: `now ${s.current}` };
  if (s.at_most != null) return { text: `≤ ${s.at_most}`, title: why(s, "instances") };
  return { text: "?", title: why(s, "instances") };
}

function span(text, cls, title) {
  const el = document.createElement("span");
  el.textContent = text;
  if (cls) el.className = cls;
  if (title) el.title = title;
  return el;
}

// renderAdvice fills el from one /api/v1/advice body.
export function renderAdvice(el, body) {
  const a = body.advice || {};
  const d = a.demand || {};
  const line = document.createElement("div");
  line.append(span("Advice ", "k"));
  const target = d.target_requests_per_second;
  line.append(span(target != null ? `for ${f.rate(target)} req/s at ${Math.round((a.headroom || 0) * 100)}% headroom: ` : "arrival rate unknown: ", "muted", why(d, "target_requests_per_second")));
  for (const [name, s] of [["prefill", a.prefill], ["decode", a.decode]]) {
    const v = stage(s);
    line.append(span(`${name[0].toUpperCase() + name.slice(1)} `), span(v.text, "v", v.title));
    line.lastChild.dataset.stage = name;
    if (s && s.current != null) line.append(span(` (now ${s.current})`, "muted"));
    line.append(span(" · "));
  }
  const kv = a.kv || {};
  line.append(span("KV "), span(kv.bytes_per_second != null ? f.bytesPerSec(kv.bytes_per_second) : "?", "v", kv.bytes_per_second != null ? "" : why(kv, "bytes_per_second")));
  // pd_bound says "P:D ≤ …" itself.
  if (a.pd) line.append(span(" · P:D "), span(a.pd, "v"));
  else line.append(span(" · "), span(a.pd_bound || "P:D ?", "v", why(a, "pd_ratio")));
  if (a.short && a.short.length) line.append(span(` — short: ${a.short.join(", ")}`, "short"));
  // Where the deployment's count is unknown, each pool's own advice.
  const pools = body.pools || [];
  [["prefill", a.prefill], ["decode", a.decode]].forEach(([name, s]) => {
    if (!s || s.instances != null) return;
    const known = pools.filter((p) => p.advice && p.advice[name] && (p.advice[name].instances != null || p.advice[name].at_most != null));
    if (pools.length < 2 || !known.length) {
      line.append(span(` (${name}: ${why(s, "instances")})`, "muted"));
      return;
    }
    const by = document.createElement("span");
    by.dataset.byPool = name;
    by.append(span(` ${name} by pool: `, "muted"));
    pools.forEach((p, i) => {
      const v = stage(p.advice && p.advice[name]);
      const cur = p.advice && p.advice[name] ? ` (now ${p.advice[name].current})` : "";
      by.append(span(`${i ? ", " : ""}${p.pool} `), span(v.text, "v", v.title), span(cur, "muted"));
    });
    line.append(by);
  });

  // Each stage's utilisation and the stage that will limit first
  // (docs/advisor.md#capacity-below-saturation).
  const next = document.createElement("div");
  next.id = "next-limit";
  next.append(span("Headroom ", "k"));
  for (const c of a.capacities || []) {
    const u = c.utilisation;
    const atMost = c.bound === "at_least" ? "≤ " : "";
    const v = span(u != null ? atMost + f.pct(u) : "?", "v", u != null ? `${c.basis}: ${c.evidence}` : why(c, "utilisation"));
    v.dataset.utilisation = c.stage;
    next.append(span(`${c.stage} `), v, span(" · "));
  }
  const lf = a.limits_first || {};
  next.append(span(lf.stage ? lf.text : lf.text || "next limit unknown", lf.stage ? "" : "muted", lf.unsure || ""));
  if (a.pd_capacity_ratio != null) next.append(span(" · capacities P:D "), span(`${a.pd_capacity_ratio.toFixed(2)}:1`, "v", a.pd_capacity || ""));

  el.replaceChildren(line, next, sloLine(body));
  el.dataset.ready = "1";
  // Under a Balanced verdict (app.css shows it there only).
  const vn = document.getElementById("verdict-next");
  if (vn) vn.textContent = lf.stage ? `· next limit: ${lf.text}` : "";
}

// fraction is one SLO's attainment: measured, a range where only bounded.
function fraction(m) {
  const w = m.within, b = m.bound;
  if (w) return span((w.at_least ? "≥ " : "") + f.pct(w.fraction), "v", `${w.observations} observations, from ${m.source || "?"}${w.exact ? ", exact at a bucket bound" : ", interpolated"}`);
  if (b) {
    const text = b.min === b.max ? f.pct(b.min) : `${f.pct(b.min)}–${f.pct(b.max)}`;
    return span(text, "v", `a bound, from ${m.source}: the legs are timed apart (docs/advisor.md#the-whole-requests-slo); ${b.observations} requests`);
  }
  return span("?", "v", m.absent);
}

// sloLine is the whole request's attainment, what a user sees.
function sloLine(body) {
  const slo = document.createElement("div");
  slo.append(span("SLO ", "k"));
  const req = body.slo && body.slo.request;
  if (!body.slo) {
    slo.append(span(body.slo_absent || "not computed", "muted"));
    return slo;
  }
  if (!req) {
    slo.append(span("this server does not give the whole request's attainment", "muted"));
    return slo;
  }
  slo.append(span(`whole request over ${Math.round(body.slo.window_seconds)} s: `, "muted"));
  for (const m of req.slos || []) {
    slo.append(span(`${m.slo.toUpperCase()} ≤ ${f.secs(m.threshold_seconds)} `));
    const v = fraction(m);
    v.dataset.slo = m.slo;
    slo.append(v, span(" · "));
  }
  if (req.absent) slo.append(span(`goodput: ${req.absent}`, "muted"));
  else {
    const range = `${f.rate(req.goodput_min_requests_per_second)}–${f.rate(req.goodput_max_requests_per_second)}`;
    const g = req.bounded ? span(range, "v", "bounded: an SLO is only bounded")
      : span(f.rate(req.goodput_requests_per_second), "v", `${range} whatever the dependence; independence assumed`);
    g.dataset.slo = "goodput";
    slo.append(span("goodput "), g, span(` of ${f.rate(req.requests_per_second)} req/s`, "muted"));
  }
  const srcs = [...new Set((req.slos || []).map((m) => m.source).filter(Boolean))];
  if (srcs.length) slo.append(span(` · from ${srcs.join("; ")}`, "muted"));
  const dec = body.slo.decode;
  if (dec && dec.misses && dec.misses.dominant) slo.append(span(` · misses dominated by ${dec.misses.dominant.replace("_", " ")}`, "", dec.misses.note));
  return slo;
}

// renderUnavailable says why there is no advice: the API's own answer.
export function renderUnavailable(el, why) {
  el.replaceChildren(span("Advice ", "k"), span(why, "muted"));
  el.dataset.ready = "1";
}

// startAdvice polls the advice while the page is visible and not paused.
export function startAdvice(el, paused) {
  const poll = async () => {
    if (!paused() && document.visibilityState === "visible") {
      try {
        const r = await fetch("/api/v1/advice");
        if (r.ok) renderAdvice(el, await r.json());
        else renderUnavailable(el, `unavailable: ${r.status} ${(await r.text()).trim()}`);
      } catch { /* the stream's status line already says we are offline */ }
    }
    setTimeout(poll, POLL_MS);
  };
  poll();
}
