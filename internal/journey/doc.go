// Package journey joins the OpenTelemetry spans that one request leaves on a
// prefill engine and on a decode engine into one record of phases: queue on
// prefill, prefill compute, KV transfer, queue on decode and decode, with
// the side each phase came from and whether it was inferred. It keeps the
// records in a bounded book that the API reads.
//
// The spans are vLLM's llm_request spans (vllm/v1/engine/output_processor.py,
// do_tracing) with the gen_ai.* attributes of vllm/tracing, and SGLang's
// request root spans with the scheduler's stage slices under them
// (python/sglang/srt/observability/trace.py and req_time_stats.py), which
// are assembled into legs across exports; docs/traces.md says what is
// joined and docs/engines.md#traces pins the names.
//
// Unknown is not zero: a phase whose inputs are missing is absent with its
// reason.
package journey
