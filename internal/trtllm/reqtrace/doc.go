// Package reqtrace turns TensorRT-LLM per-request perf-metrics records into a
// ledger of request phases: queue, prefill, KV transfer, decode, TTFT, E2E and
// TPOT, with distributions, per-phase shares of E2E and the slowest requests.
//
// Everything here is pure: parsing works on bytes, alignment and span math on
// values, and the renderers write to an io.Writer. The command line lives in
// cmd/ptdmon.
//
// The central rule is "unknown is not zero": a timestamp that is absent, null
// or ≤ 0 is unknown, and a span that cannot be trusted (an operand missing, a
// negative result, a broken causal chain across clocks) is reported missing
// with its reason instead of as 0 or a negative number.
package reqtrace
