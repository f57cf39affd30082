// What each chart plots: for every curve, how to read it from a point for
// the whole deployment (stage sums) and for one instance (row filter).
// A getter returns [value, absentCode] or [null, null, reason].
import { pos } from "./store.js";

const C = { p: "#1f6fd1", k: "#e8710a", d: "#1e9e4a", p2: "#8fb8ec", d2: "#8fd3a6", k2: "#c0392b", g: "#666", t: "#6a3fb0" };

function stage(sec, name) {
  return (pt) => {
    const j = pos(sec, name);
    return [pt[sec][j], sec + j];
  };
}

// rowOf finds the filtered instance in this point's rows.
function rowOf(pt, target) {
  for (let r = 0; r < pt.names.length; r++) if (pt.names[r].target === target) return r;
  return -1;
}

// inst reads an instance's field, only when the instance has the given role
// (null role: any): a decode instance has no prefill waiting queue.
function inst(name, role) {
  return (pt, ctx) => {
    const r = rowOf(pt, ctx.filter);
    if (r < 0) return [null, null, ctx.filter + " is not in this point"];
    const n = pt.names[r];
    if (role && n.role !== role) return [null, null, `${ctx.filter} is a ${n.role} instance`];
    const j = pos("i", name);
    return [pt.i[r][j], `i${r}.${j}`];
  };
}

const w = (ctx, name) => (ctx.mode === "w" ? name + "_window" : name);

function rateCurve(sec, role) {
  return {
    all: (pt, ctx) => stage(sec, w(ctx, "requests_per_second"))(pt),
    one: (pt, ctx) => {
      if (sec !== "k") return inst(w(ctx, "requests_per_second"), role)(pt, ctx);
      // An instance's KV req/s is its own bytes/s over B_request.
      const [v, code, why] = inst(w(ctx, "kv_bytes_per_second"), null)(pt, ctx);
      if (v == null) return [null, code, why];
      if (!(ctx.bytesPerRequest > 0)) return [null, null, "B_request is not set"];
      return [v / ctx.bytesPerRequest, null];
    },
  };
}

const both = (sec, name, role) => ({ all: stage(sec, name), one: inst(name, role) });
const stageOnly = (sec, name) => ({ all: stage(sec, name), one: null });

// latency picks the stage that has the histogram: SGLang reports TTFT on
// decode instances, vLLM on both; decode is preferred when present.
function latency(metric, q) {
  return {
    all: (pt, ctx) => stage(ctx.latencyStage[metric] || "d", `${metric}_p${q}`)(pt),
    one: null,
  };
}

export const CHARTS = [
  {
    id: "rates", title: "Requests/s by stage", unit: "req/s", height: 250, fmt: "rate", wide: true,
    // Each chart of rates says its window in its title.
    window: (ctx) => (ctx.mode === "w" ? ` (over ${ctx.window} s)` : " (instant)"),
    curves: [
      { label: "Prefill", color: C.p, width: 2, ...rateCurve("p", "prefill") },
      { label: "KV transfer", color: C.k, width: 2, ...rateCurve("k", null) },
      { label: "Decode", color: C.d, width: 2, ...rateCurve("d", "decode") },
    ],
  },
  {
    id: "kvbytes", title: "KV transfer throughput", unit: "bytes/s", fmt: "si", right: { unit: "transfers/s", fmt: "rate", headroom: 2 },
    window: (ctx) => ` (bytes/s ${ctx.mode === "w" ? `over ${ctx.window} s` : "instant"}; transfers/s and failures/s over ${ctx.window} s)`,
    curves: [
      { label: "Bytes/s", color: C.k, width: 2, all: (pt, ctx) => stage("k", w(ctx, "bytes_per_second"))(pt), one: (pt, ctx) => inst(w(ctx, "kv_bytes_per_second"), null)(pt, ctx) },
      // Transfers/s is often proportional to bytes/s, so the two lines can
      // lie on each other: a dashed line in another colour stays visible.
      { label: "Transfers/s", color: C.t, width: 1.5, dash: [6, 4], scale: "n", ...stageOnly("k", "transfers_per_second") },
      { label: "Failures/s", color: C.k2, scale: "n", ...stageOnly("k", "failures_per_second") },
    ],
  },
  {
    id: "sched", title: "Running and waiting requests", unit: "requests", fmt: "count",
    curves: [
      { label: "Prefill running", color: C.p, ...both("p", "running", "prefill") },
      { label: "Prefill waiting", color: C.p, dash: [4, 3], ...both("p", "waiting", "prefill") },
      { label: "Decode running", color: C.d, ...both("d", "running", "decode") },
      { label: "Decode waiting", color: C.d, dash: [4, 3], ...both("d", "waiting", "decode") },
    ],
  },
  {
    id: "queues", title: "P/D hand-off queues", unit: "requests", fmt: "count",
    curves: [
      { label: "Bootstrap (P)", color: C.p2, ...both("p", "queue_bootstrap", "prefill") },
      { label: "Inflight (P)", color: C.p, ...both("p", "queue_inflight", "prefill") },
      { label: "Prealloc (D)", color: C.d2, ...both("d", "queue_prealloc", "decode") },
      { label: "Transfer (D)", color: C.d, ...both("d", "queue_transfer", "decode") },
    ],
  },
  {
    id: "kvusage", title: "KV cache usage", unit: "used", fmt: "pct", range: [0, 1],
    curves: [
      { label: "Prefill", color: C.p, ...both("p", "kv_cache_usage_ratio", "prefill") },
      { label: "Decode", color: C.d, ...both("d", "kv_cache_usage_ratio", "decode") },
    ],
  },
  {
    id: "tokens", title: "Tokens/s", unit: "prompt tok/s", fmt: "si", right: { unit: "generated tok/s", fmt: "si" },
    curves: [
      { label: "Prompt (P)", color: C.p, all: stage("p", "prompt_tokens_per_second"), one: inst("prompt_tokens_per_second", null) },
      // Prompts are ~30× longer than outputs: generation gets its own axis.
      { label: "Generation (D)", color: C.d, scale: "n", all: stage("d", "generation_tokens_per_second"), one: inst("generation_tokens_per_second", null) },
    ],
  },
  ...["ttft", "itl", "e2e"].map((m) => ({
    id: m, title: { ttft: "Time to first token", itl: "Inter-token latency", e2e: "End-to-end latency" }[m],
    unit: "s", fmt: "secs", latency: m,
    curves: [50, 90, 99].map((q, i) => ({ label: "p" + q, color: ["#7a9cc6", "#3f6fb0", "#18386e"][i], ...latency(m, q) })),
  })),
];
