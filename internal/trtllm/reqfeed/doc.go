// Package reqfeed feeds TensorRT-LLM's per-request perf-metrics records to
// the request book of serve (journey.Book), beside the requests the
// trace receiver joins. It polls GET /perf_metrics, which answers the
// records completed since the previous call and forgets them
// (docs/trtllm.md#generation-a), parses and computes them with
// internal/trtllm/reqtrace, puts the engine's steady-clock times on the
// wall clock and files one journey record per request.
package reqfeed
