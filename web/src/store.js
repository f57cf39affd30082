// Decodes the compact points of /api/v1/series?format=compact and of the
// stream, and keeps the newest hour of them.

export const FIELDS = {
  p: ["requests_per_second", "requests_per_second_window", "running", "waiting",
    "queue_bootstrap", "queue_inflight", "queue_prealloc", "queue_transfer", "kv_cache_usage_ratio",
    "prompt_tokens_per_second", "generation_tokens_per_second",
    "ttft_p50", "ttft_p90", "ttft_p99", "itl_p50", "itl_p90", "itl_p99", "e2e_p50", "e2e_p90", "e2e_p99"],
  k: ["requests_per_second", "requests_per_second_window", "bytes_per_second", "bytes_per_second_window",
    "transfers_per_second", "failures_per_second", "transfer_p50", "transfer_p90", "transfer_p99"],
  i: ["up", "requests_per_second", "requests_per_second_window", "kv_bytes_per_second",
    "kv_bytes_per_second_window", "running", "waiting", "queue_bootstrap", "queue_inflight",
    "queue_prealloc", "queue_transfer", "kv_cache_usage_ratio", "prompt_tokens_per_second",
    "generation_tokens_per_second"],
};
FIELDS.d = FIELDS.p;

// idx maps a section and field name to its position.
const idx = {};
export function setFields(f) {
  for (const sec of ["p", "k", "d", "i"]) {
    const names = (f && f[sec]) || FIELDS[sec];
    idx[sec] = Object.fromEntries(names.map((n, i) => [n, i]));
  }
}
setFields(null);
export const pos = (sec, name) => idx[sec][name];

// Decoder turns one source's compact points into objects; instance names
// arrive only when they change, so each source (a series response, one
// stream connection) needs its own decoder.
export class Decoder {
  constructor() { this.names = []; }
  decode(c) {
    if (c.nm) this.names = c.nm.map(([target, role, engine]) => ({ target, role, engine }));
    const abs = {};
    for (const [why, codes] of Object.entries(c.a || {})) {
      for (const code of codes.split(" ")) abs[code] = why;
    }
    return { t: c.t / 1000, p: c.p, k: c.k, d: c.d, g: c.g, u: c.u || [], i: c.i || [], names: this.names, abs, v: c.v };
  }
}

// reason says why a value is absent; instance rows may carry one reason for
// the whole row (a down target).
export function reason(pt, code) {
  if (!pt) return "";
  if (pt.abs[code]) return pt.abs[code];
  const dot = code.indexOf(".");
  if (dot > 0 && pt.abs[code.slice(0, dot)]) return pt.abs[code.slice(0, dot)];
  return "";
}

export class Store {
  constructor(max = 3600) { this.max = max; this.pts = []; }
  // add keeps points in time order and drops ones already held.
  add(pt) {
    const last = this.pts[this.pts.length - 1];
    if (last && pt.t <= last.t) return false;
    this.pts.push(pt);
    if (this.pts.length > this.max) this.pts.splice(0, this.pts.length - this.max);
    return true;
  }
  latest() { return this.pts[this.pts.length - 1]; }
  // since returns the points newer than t (seconds), oldest first.
  since(t) {
    let lo = 0, hi = this.pts.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (this.pts[m].t > t) hi = m; else lo = m + 1;
    }
    return this.pts.slice(lo);
  }
}
