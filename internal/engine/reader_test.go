package engine

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const gib = 1 << 30

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Expected values are worked out by hand from the numbers written into each
// capture (see the comments), not taken from the adapter's output.
func TestReaderCaptures(t *testing.T) {
	type want struct {
		engine   Engine
		role     Role
		model    string
		counters map[Metric]float64
		series   map[Metric]int
		gauges   map[Metric]float64
		absent   []Metric
		hists    map[Metric][2]float64 // count, sum
		notes    int
	}
	f := func(file string, role Role, w want) {
		t.Helper()
		r := NewReader(EngineAuto, role, KVAuto)
		o, err := r.Read(readFile(t, filepath.Join("testdata", file)), "text/plain; version=0.0.4")
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if o.Engine != w.engine || o.Role != w.role || o.Model != w.model {
			t.Errorf("%s: engine/role/model = %s/%s/%s, want %s/%s/%s", file, o.Engine, o.Role, o.Model, w.engine, w.role, w.model)
		}
		for m, v := range w.counters {
			got, ok := o.CounterSum(m)
			if !ok || math.Abs(got-v) > 1e-9*math.Max(1, v) {
				t.Errorf("%s: counter %s = %v (present %v), want %v", file, m, got, ok, v)
			}
		}
		for m, n := range w.series {
			got := 0
			for _, c := range o.Counters {
				if c.Metric == m {
					got++
				}
			}
			if got != n {
				t.Errorf("%s: counter %s has %d source series, want %d", file, m, got, n)
			}
		}
		for m, v := range w.gauges {
			got, ok := o.Gauge(m)
			if !ok || math.Abs(got-v) > 1e-12 {
				t.Errorf("%s: gauge %s = %v (present %v), want %v", file, m, got, ok, v)
			}
		}
		for _, m := range w.absent {
			if m.Kind() == KindGauge {
				if _, ok := o.Gauge(m); ok {
					t.Errorf("%s: gauge %s present, want absent", file, m)
				}
			} else if _, ok := o.CounterSum(m); ok {
				t.Errorf("%s: counter %s present, want absent", file, m)
			}
		}
		for m, cs := range w.hists {
			h := o.Histograms[m.HistogramIndex()]
			if !h.Present || h.Count != cs[0] || math.Abs(h.Sum-cs[1]) > 1e-9 {
				t.Errorf("%s: histogram %s count/sum = %v/%v (present %v), want %v/%v", file, m, h.Count, h.Sum, h.Present, cs[0], cs[1])
			}
			if n := len(h.Buckets); n == 0 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) || h.Buckets[n-1].Count != cs[0] {
				t.Errorf("%s: histogram %s: +Inf bucket missing or not equal to the count", file, m)
			}
		}
		if len(o.Notes) != w.notes {
			t.Errorf("%s: notes = %q, want %d", file, o.Notes, w.notes)
		}
	}

	// vLLM prefill, DP=2, FlagCX. Completions: engine 0 length 1000 + engine 1
	// stop 3 + length 990; abort 7+1 and error 2 are not completions.
	f("vllm_prefill_flagcx.txt", Prefill, want{
		engine: VLLM, role: Prefill, model: "meta-llama/Llama-3.1-8B-Instruct",
		counters: map[Metric]float64{
			Completed: 1993, Aborted: 8, Errored: 2,
			PromptTokens: 8265728 + 8142848, GenerationTokens: 1009 + 994,
			KVBytes: 1993 * gib, KVTransfers: 4000 + 3972, KVFailNetwork: 1, KVExpired: 2,
			PrefixQueries: 8265728 + 8142848, PrefixHits: 0,
		},
		// 2 engines × (stop, length, repetition).
		series: map[Metric]int{Completed: 6, KVBytes: 2, KVFailNetwork: 4},
		gauges: map[Metric]float64{Running: 5, Waiting: 8, KVUsage: 0.375},
		absent: []Metric{QueueInflight, QueueBootstrap},
		// TTFT: engine 0 saw 0.2, 0.3, 0.9; engine 1 saw 0.4. FlagCX transfers 0.08, 0.09, 0.3 and 0.09.
		hists: map[Metric][2]float64{TTFT: {4, 1.8}, KVXferTime: {4, 0.56}},
	})
	// llm-d-inference-sim labels the finish reason finish_reason: the
	// three aborts are not completions (stop 40 + length 5 are).
	f("llmd_inference_sim.txt", Decode, want{
		engine: VLLM, role: Decode, model: "meta-llama/Llama-3.1-8B-Instruct",
		counters: map[Metric]float64{Completed: 45, Aborted: 3},
		gauges:   map[Metric]float64{Running: 4, Waiting: 20, KVUsage: 0.25},
	})
	// vLLM decode with NIXL: eight rank-level transfers of 1/4 GiB.
	f("vllm_decode_nixl.txt", Decode, want{
		engine: VLLM, role: Decode, model: "meta-llama/Llama-3.1-8B-Instruct",
		counters: map[Metric]float64{Completed: 1500 + 480 + 4, Aborted: 3, Errored: 1, KVBytes: 2 * gib, KVTransfers: 8, KVFailNetwork: 3, GenerationTokens: 1021440},
		gauges:   map[Metric]float64{Running: 180, Waiting: 12, KVUsage: 0.875},
		hists:    map[Metric][2]float64{ITL: {100, 90*0.02 + 10*0.06}, KVXferTime: {2, 0.22}},
	})
	// SGLang prefill with both TP ranks reporting: rank 0 counts once; the
	// priority="1" series is not a total; pid-labelled gauges add up (1+2).
	// kv_transfer_total_mb: 500 transfers of 2048 MB; latency in ms → s.
	f("sglang_prefill.txt", RoleUnknown, want{
		engine: SGLang, role: Prefill, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{Completed: 500, KVBytes: 500 * 2048 * (1 << 20), KVTransfers: 500, KVFailures: 1, BootstrapFailed: 2, Aborted: 4, PromptTokens: 4096000},
		series:   map[Metric]int{KVBytes: 1},
		gauges:   map[Metric]float64{Running: 4, Waiting: 30, KVUsage: 0.62, QueueBootstrap: 3, QueueInflight: 11, RetractedNow: 3},
		hists:    map[Metric][2]float64{KVXferTime: {500, (400*80 + 100*300) / 1000.0}},
	})
	// SGLang decode with DP attention: dp_rank 0..3 each its own group (tp_rank = dp_rank).
	f("sglang_decode_dp.txt", RoleUnknown, want{
		engine: SGLang, role: Decode, model: "deepseek-ai/DeepSeek-V3",
		counters: map[Metric]float64{Completed: 400, GenerationTokens: 409600},
		gauges:   map[Metric]float64{Running: 10 + 20 + 30 + 40, Waiting: 4, QueuePrealloc: 8, QueueTransfer: 20, KVUsage: (0.1 + 0.2 + 0.3 + 0.4) / 4},
		absent:   []Metric{KVBytes},
		hists:    map[Metric][2]float64{TTFT: {400, 300*0.5 + 100*1.5}, ITL: {1000, 30}, E2E: {400, 8000}},
	})
	// Old SGLang: prealloc is the old name of the bootstrap queue; the
	// kv_transfer_total_mb gauge cannot give bytes and is reported, not used.
	f("sglang_prefill_old.txt", RoleUnknown, want{
		engine: SGLang, role: Prefill, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{Completed: 77},
		gauges:   map[Metric]float64{QueueBootstrap: 6, QueueInflight: 2, Running: 4, Waiting: 9},
		absent:   []Metric{KVBytes, KVTransfers},
		notes:    1,
	})

	// NIXL's own telemetry on an SGLang prefill process, two agents: tx
	// 3+5 GiB and rx 1 GiB; 12+20 sent and 4 received requests; per agent
	// backend 1 and remote_disconnect 3 (network), unknown 2 (unclassified);
	// agent 0 took 12 × 10 ms, agent 1 24 × 15 ms, posting 100 µs and 200 µs.
	f("nixl_telemetry.txt", Prefill, want{
		engine: NIXLTelemetry, role: Prefill,
		counters: map[Metric]float64{KVBytes: 9 * gib, KVTransfers: 36, KVFailNetwork: 8, KVFailures: 4},
		series:   map[Metric]int{KVBytes: 4, KVFailNetwork: 4, KVFailures: 18}, // 9 unclassified statuses × 2 agents
		absent:   []Metric{KVFailTimeout, Completed},
		hists:    map[Metric][2]float64{KVXferTime: {36, 0.48}, KVPostTime: {36, 0.006}},
	})
	// The Mooncake transfer engine (PR #2958): 40 requests of 1 GiB, 2
	// failed, 3 in flight, 38 completed in 1.5 s.
	f("mooncake_te.txt", Prefill, want{
		engine: MooncakeTE, role: Prefill,
		counters: map[Metric]float64{KVBytes: 40 * gib, KVTransfers: 40, KVFailNetwork: 2},
		gauges:   map[Metric]float64{KVInflight: 3},
		absent:   []Metric{KVFailures},
		hists:    map[Metric][2]float64{KVXferTime: {38, 1.5}},
	})
	// vLLM decode over NIXL where 10 of 100 KV loads failed and were
	// recomputed: 10 × 4096 prompt tokens computed on decode, 4096 cache
	// hits, the rest (100 × 4096 − 40960 − 4096) transferred; 90 transfers
	// posted in 0.2 ms with 64 descriptors each; 4 lost notifications.
	f("vllm_decode_nixl_recompute.txt", Decode, want{
		engine: VLLM, role: Decode, model: "meta-llama/Llama-3.1-8B-Instruct",
		counters: map[Metric]float64{
			Completed: 100, PromptTokens: 409600,
			PromptTokensComputed: 40960, PromptTokensCached: 4096, PromptTokensTransferred: 364544,
			KVFailNetwork: 10, KVFailNotify: 4, KVExpired: 0,
		},
		absent: []Metric{KVBytes, KVFailures},
		hists: map[Metric][2]float64{
			PrefillKVComputedTokens: {100, 40960}, KVPostTime: {90, 90 * 0.0002}, KVDescriptors: {90, 90 * 64},
		},
	})
	// Dynamo's frontend, a router: 900 + 60 requests answered, 12 errors;
	// 7 queued, 40 in flight; TTFT 0.25 s and an estimated KV transfer of
	// 20 ms for each of 960; active prefill tokens 3072 + 1024 and decode
	// blocks 500 + 700 over the workers.
	f("dynamo_frontend.txt", RoleUnknown, want{
		engine: DynamoFrontend, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{FrontendRequests: 960, Errored: 12},
		gauges:   map[Metric]float64{FrontendQueued: 7, FrontendInflight: 40, ActivePrefillTokens: 4096, ActiveDecodeBlocks: 1200},
		absent:   []Metric{Completed},
		hists:    map[Metric][2]float64{TTFT: {960, 240}, KVXferEstimate: {960, 19.2}},
	})
	// llm-d's EPP: 700 + 300 requests routed, 15 errors; 24 running, 6
	// held by flow control; TTFT 0.25 s for each of 1000; 400 decode-only
	// and 600 prefill-decode decisions, the deprecated twin not added.
	f("llmd_epp.txt", RoleUnknown, want{
		engine: LLMDEPP, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{RouterRequests: 1000, Errored: 15, RouterDecodeOnly: 400, RouterRemotePrefill: 600},
		gauges:   map[Metric]float64{FrontendInflight: 24, FrontendQueued: 6},
		absent:   []Metric{Completed, FrontendRequests},
		hists:    map[Metric][2]float64{TTFT: {1000, 250}},
	})
	// SGLang's model gateway: 450 + 50 routed, 5 errors; queued 3 + 9 and
	// in flight 20 + 12 over the scheduler's classes; the user-facing P/D
	// TTFT (0.4 s each), not the decode leg's.
	f("sglang_gateway.txt", RoleUnknown, want{
		engine: SGLangGateway, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{RouterRequests: 500, Errored: 5},
		gauges:   map[Metric]float64{FrontendQueued: 12, FrontendInflight: 32},
		absent:   []Metric{Completed, RouterDecodeOnly},
		hists:    map[Metric][2]float64{TTFT: {450, 180}},
	})
	// Load shed before the engine queue. llm-d's flow control: 70
	// rejected for capacity, 20 evicted by their TTL and 5 displaced by
	// higher priorities are shed; the dispatched, the cancelled and the
	// internal errors are not.
	f("llmd_epp_shed.txt", RoleUnknown, want{
		engine: LLMDEPP, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{RouterRequests: 1000, Shed: 95},
		series:   map[Metric]int{Shed: 3},
	})
	// The SGLang gateway sheds 40 at selection, 10 at dispatch and 6 at
	// P/D admission.
	f("sglang_gateway_shed.txt", RoleUnknown, want{
		engine: SGLangGateway, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{RouterRequests: 900, Shed: 56},
	})
	// Dynamo's frontend: 84 errors of error_type="overload" are errors and
	// shed; the 6 validation errors are errors only.
	f("dynamo_frontend_overload.txt", RoleUnknown, want{
		engine: DynamoFrontend, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{FrontendRequests: 900, Errored: 90, Shed: 84},
		series:   map[Metric]int{Shed: 2, Errored: 3},
	})
	// The SGLang gateway's P/D legs (sequential vLLM over gRPC): 300
	// prefill legs of 0.3 s and 100 of 0.7 s, 380 hand-overs of 0.02 s and
	// 20 of 0.1 s; 12 prefills that handed over no KV, 3 bootstraps
	// refused; 7 P/D retries counted once (the decode series are their
	// twins) and 2 regular ones.
	f("sglang_gateway_pd_legs.txt", RoleUnknown, want{
		engine: SGLangGateway, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{RouterRequests: 400, KVFailures: 12, BootstrapFailed: 3, Migrated: 9},
		series:   map[Metric]int{Migrated: 2},
		hists:    map[Metric][2]float64{PrefillLegTime: {400, 160}, HandoverTime: {400, 9.6}},
	})
	// Dynamo's frontend stages: preprocess (400 of 4 ms, 100 of 20 ms)
	// is the router's own time; route and transport_roundtrip, once per
	// leg, are not read. 4 + 9 migrations.
	f("dynamo_frontend_stages.txt", RoleUnknown, want{
		engine: DynamoFrontend, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{FrontendRequests: 500, Migrated: 13},
		hists:    map[Metric][2]float64{RouterPreprocessTime: {500, 3.6}},
	})
	// llm-d's flow-control queue: the dispatched requests' wait (600 of
	// 0.2 s, 300 of 0.6 s), not the evicted or the rejected.
	f("llmd_epp_queue.txt", RoleUnknown, want{
		engine: LLMDEPP, role: Router, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{RouterRequests: 1000},
		hists:    map[Metric][2]float64{RouterQueueTime: {900, 300}},
	})
	// SGLang's waiting-queue rejections, every reason shed: 30 + 2 + 8.
	f("sglang_queue_rejected.txt", RoleUnknown, want{
		engine: SGLang, role: Prefill, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{Completed: 600, Shed: 40},
		gauges:   map[Metric]float64{Waiting: 64},
	})
	// vLLM decode: of 14 waiting, 2 for capacity and 12 deferred (their
	// KV not arrived); 25 + 5 refused at admission.
	f("vllm_decode_waiting_reason.txt", Decode, want{
		engine: VLLM, role: Decode, model: "meta-llama/Llama-3.1-8B-Instruct",
		counters: map[Metric]float64{Shed: 30},
		gauges:   map[Metric]float64{Waiting: 14, WaitingCapacity: 2, WaitingDeferred: 12, Running: 20},
	})
	// vLLM decode in sleep mode: both DP engines asleep at level 1, none
	// awake, none at level 2.
	f("vllm_decode_asleep.txt", Decode, want{
		engine: VLLM, role: Decode, model: "meta-llama/Llama-3.1-8B-Instruct",
		counters: map[Metric]float64{Completed: 800},
		gauges:   map[Metric]float64{EnginesAwake: 0, EnginesWeightsOffloaded: 2, EnginesDiscardAll: 0, Running: 0},
	})
	// NIXL's multi-process exporter: both TP ranks' agents, each pulling
	// its own shard, add up (6 GiB + 6 GiB, 12 + 12 transfers, 1 + 2
	// backend errors).
	f("nixl_telemetry_mp.txt", Decode, want{
		engine: NIXLTelemetry, role: Decode,
		counters: map[Metric]float64{KVBytes: 12 * gib, KVTransfers: 24, KVFailNetwork: 3},
		series:   map[Metric]int{KVBytes: 2},
	})
	// vLLM's NIXL connector in push mode, on prefill: 300 transfers of
	// 1 GiB written, 3 failed, 4 registrations expired (a timeout) and 1
	// writer-loop error (unclassified).
	f("vllm_prefill_nixl_push.txt", Prefill, want{
		engine: VLLM, role: Prefill, model: "meta-llama/Llama-3.1-8B-Instruct",
		counters: map[Metric]float64{KVBytes: 300 * gib, KVTransfers: 300, KVFailNetwork: 3, KVFailTimeout: 4, KVFailures: 1},
	})
	// SGLang decode with its bootstrap stage split: the handshake (40 ms)
	// read as the bootstrap stage, the allocation wait (60 ms) as its own.
	f("sglang_decode_stages_split.txt", RoleUnknown, want{
		engine: SGLang, role: Decode, model: "Qwen/Qwen3-32B",
		hists: map[Metric][2]float64{StageBootstrap: {100, 4}, StageAllocWait: {100, 6}},
	})
	// vLLM under Ray: two Serve replicas on one node's agent add up (the
	// legacy unsuffixed counters not added again, the abort left out),
	// their KV usage is averaged, NIXL bytes come from the connector's
	// family under Ray's prefix.
	f("ray_vllm.txt", Decode, want{
		engine: RayVLLM, role: Decode, model: "qwen",
		counters: map[Metric]float64{Completed: 1000, Aborted: 7, KVBytes: 400 * gib, KVTransfers: 400},
		gauges:   map[Metric]float64{Running: 24, WaitingDeferred: 8, KVUsage: 0.6},
	})
	// vLLM with NIXL for P/D and CPU offload beside it: only NIXL's 100 GiB
	// are KV transfer bytes, never the offload's 700 GB.
	f("vllm_decode_nixl_offload.txt", Decode, want{
		engine: VLLM, role: Decode, model: "meta-llama/Llama-3.1-8B-Instruct",
		counters: map[Metric]float64{KVBytes: 100 * gib, KVTransfers: 100},
		series:   map[Metric]int{KVBytes: 1},
	})
	// vLLM's router: 780 + 20 answered, 8 errors, 2 + 30 running; no model.
	f("vllm_router.txt", RoleUnknown, want{
		engine: VLLMRouter, role: Router,
		counters: map[Metric]float64{FrontendRequests: 800, Errored: 8},
		gauges:   map[Metric]float64{FrontendInflight: 32},
		absent:   []Metric{RouterRequests, Completed},
	})
	// SGLang prefill, 2026: 200 requests, bootstrap 40 ms and allocation
	// 8 ms each, 8 GB/s (GiB: 1024 of its MiB); stages bootstrap 0.04 s,
	// waiting 0.1 s, forward 0.3 s, KV transfer 0.05 s (tokenize not read);
	// timeouts 2 in bootstrap and 5 in transfer; 6 prefill retries.
	f("sglang_prefill_2026.txt", RoleUnknown, want{
		engine: SGLang, role: Prefill, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{Completed: 200, PrefillRetries: 6, KVFailTimeout: 7},
		series:   map[Metric]int{KVFailTimeout: 2},
		hists: map[Metric][2]float64{
			KVBootstrapTime: {200, 8}, KVAllocTime: {200, 1.6}, KVSpeed: {200, 200 * 8 * gib},
			StageBootstrap: {200, 8}, StageWaiting: {200, 20}, StageForward: {200, 60}, StageKVTransfer: {200, 10},
		},
	})
	// SGLang 0.5.20 decode, two DP ranks of two TP ranks: idle 120 s and
	// 80 s (TP rank 0 of each; the idle stage, 119 + 79, is not added as
	// the idle counter is there); forward occupancy 60 % and 80 %, averaged.
	f("sglang_busy.txt", RoleUnknown, want{
		engine: SGLang, role: Decode, model: "Qwen/Qwen3-32B",
		counters: map[Metric]float64{SchedulerIdle: 200},
		series:   map[Metric]int{SchedulerIdle: 2},
		gauges:   map[Metric]float64{ForwardOccupancy: (0.6 + 0.8) / 2, Running: 32},
	})
	// A TensorRT-LLM gen worker's iteration gauges: the last iteration took
	// 25 ms with 0 context and 48 generation requests; 6144 of 8192 KV
	// blocks used, 2048 free, 32 tokens each.
	f("trtllm_worker_iter.txt", Decode, want{
		engine: TensorRTLLM, role: Decode,
		gauges: map[Metric]float64{
			IterationLatency: 0.025, ContextRequests: 0, GenerationRequests: 48, Running: 48,
			KVBlocks: 8192, KVBlocksFree: 2048, KVBlocksUsed: 6144, KVBlockSize: 32,
			MaxActiveRequests: 64,
		},
	})
	// vLLM, two engines: 100 steps of 8192 tokens and 60 steps of 409600
	// tokens in all; a KV cache of 40000 blocks of 16 tokens per engine
	// from the info gauge's labels: the blocks add up, the size does not.
	f("vllm_busy.txt", Prefill, want{
		engine: VLLM, role: Prefill, model: "meta-llama/Llama-3.1-8B-Instruct",
		gauges: map[Metric]float64{KVBlocks: 80000, KVBlockSize: 16, Running: 8},
		hists:  map[Metric][2]float64{IterationTokens: {160, 819200 + 409600}},
	})
}

// The busy-time families: SGLang's idle stage stands in for the idle
// counter where an older build lacks it; a build with neither, and an
// occupancy of NaN (SGLang's value once idle), give no value, never 0; an
// info gauge without the labels gives none either.
func TestReaderBusySignals(t *testing.T) {
	read := func(e Engine, role Role, body string) *Observation {
		t.Helper()
		o, err := NewReader(e, role, KVAuto).Read([]byte(body), "")
		if err != nil {
			t.Fatalf("%.60q: %v", body, err)
		}
		return o
	}
	o := read(SGLang, Decode, `sglang:scheduler_stage_seconds_total{category="idle",dp_rank="0",tp_rank="0"} 119
sglang:scheduler_stage_seconds_total{category="idle",dp_rank="0",tp_rank="1"} 118
sglang:scheduler_stage_seconds_total{category="run_batch",dp_rank="0",tp_rank="0"} 150
sglang:scheduler_stage_seconds_total{category="idle",dp_rank="1",tp_rank="0"} 79
sglang:fwd_occupancy{dp_rank="0",tp_rank="0"} NaN
`)
	if v, ok := o.CounterSum(SchedulerIdle); !ok || v != 198 {
		t.Errorf("idle from the stage counter = %v (present %v), want 198", v, ok)
	}
	if _, ok := o.Gauge(ForwardOccupancy); ok {
		t.Error("occupancy NaN read as a value")
	}
	o = read(SGLang, Decode, "sglang:num_running_reqs{tp_rank=\"0\"} 3\n")
	if _, ok := o.CounterSum(SchedulerIdle); ok {
		t.Error("idle present in a build without the family")
	}
	o = read(VLLM, Decode, "vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"None\"} 1\nvllm:num_requests_running 1\n")
	if _, ok := o.Gauge(KVBlocks); ok {
		t.Error("KV blocks read from num_gpu_blocks=\"None\"")
	}
	if v, ok := o.Gauge(KVBlockSize); !ok || v != 16 {
		t.Errorf("block size = %v (present %v), want 16", v, ok)
	}
	o = read(TensorRTLLM, Decode, "trtllm_num_requests_running 2\n")
	for _, m := range []Metric{IterationLatency, ContextRequests, GenerationRequests, KVBlocks, KVBlocksFree, KVBlocksUsed, KVBlockSize} {
		if _, ok := o.Gauge(m); ok {
			t.Errorf("%s present in a build without it", m)
		}
	}
}

func TestReaderFixtures(t *testing.T) {
	// Real excerpts from users' reports (testdata/reports; each file's first line names its source).
	f := func(file string, role Role, check func(*Observation) string) {
		t.Helper()
		path := filepath.Join("testdata", "reports", file)
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("fixture %s: %v", file, err)
		}
		r := NewReader(EngineAuto, role, KVAuto)
		o, err := r.Read(readFile(t, path), "")
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if msg := check(o); msg != "" {
			t.Errorf("%s: %s", file, msg)
		}
	}
	f("vllm_issue_617_a.txt", Prefill, func(o *Observation) string {
		// vLLM 0.10 exports the deprecated gpu_prefix_cache_hits_total; the
		// excerpt has no current-name hits, so the old one is read.
		if v, ok := o.CounterSum(PrefixHits); !ok || v != 0 {
			return "prefix hits from the deprecated name missing"
		}
		if v, _ := o.CounterSum(PrefixQueries); v != 32 {
			return "prefix queries != 32"
		}
		if v, ok := o.Gauge(KVUsage); !ok || v != 9.75010481363281e-06 {
			return "kv usage wrong"
		}
		if o.Model != "zai-org/GLM-4.5" {
			return "model " + o.Model
		}
		return ""
	})
	f("vllm_pr_22227.txt", Decode, func(o *Observation) string {
		// No # TYPE lines: buckets are still read by name; no _count, so the
		// count is the largest bucket seen (no +Inf in the excerpt: none).
		h := o.Histograms[PrefillTime.HistogramIndex()]
		if !h.Present || len(h.Buckets) != 13 || h.HasCount {
			return "untyped prefill-time buckets not read"
		}
		return ""
	})
	f("sglang_issue_1614_aibrix_a.txt", Decode, func(o *Observation) string {
		// num_retracted_reqs: four pid-labelled zeros.
		if v, ok := o.Gauge(RetractedNow); !ok || v != 0 {
			return "retracted gauge missing"
		}
		return ""
	})
	for _, file := range []string{"sglang_issue_13485.txt", "sglang_pr_4412.txt"} {
		f(file, Decode, func(o *Observation) string {
			if o.Engine != SGLang {
				return "engine not detected"
			}
			if _, ok := o.Gauge(Running); !ok {
				return "running gauge missing"
			}
			return ""
		})
	}
}

func TestReaderErrors(t *testing.T) {
	f := func(body, contentType string, role Role, wantErr error, wantText string) {
		t.Helper()
		r := NewReader(EngineAuto, role, KVAuto)
		_, err := r.Read([]byte(body), contentType)
		if err == nil {
			t.Fatalf("Read(%.40q) succeeded, want an error", body)
		}
		if wantErr != nil && !errors.Is(err, wantErr) {
			t.Errorf("Read(%.40q) = %v, want %v", body, err, wantErr)
		}
		if !strings.Contains(err.Error(), wantText) {
			t.Errorf("Read(%.40q) = %q, want it to mention %q", body, err, wantText)
		}
	}
	vllm := "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 1\n"
	f(vllm, "", RoleUnknown, ErrRole, "set role")
	f("[]\n", "", Decode, nil, "JSON")
	f("[]", "application/json", Decode, nil, "TensorRT-LLM")
	f("vllm:num_requests_running{engine=\"0\" 1\n", "", Decode, nil, "parse")
	f("process_cpu_seconds_total 1\n", "", Decode, ErrUnusable, "no vLLM")
	f(vllm+"sglang:num_running_reqs 1\n", "", Decode, ErrUnusable, "mixes")
	f("\x00\x01\x02garbage", "", Decode, nil, "binary")
	f("# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{engine_type=\"prefill\"} 1\nsglang:num_queue_reqs{engine_type=\"decode\"} 1\n", "", RoleUnknown, ErrRole, "both")
}

func TestReaderEngineMismatch(t *testing.T) {
	// A target configured as vLLM that serves SGLang has nothing ptdmon can read.
	r := NewReader(VLLM, Decode, KVAuto)
	body := readFile(t, filepath.Join("testdata", "sglang_decode_dp.txt"))
	o, err := r.Read(body, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.CounterSum(Completed); ok {
		t.Error("SGLang completions read on a target configured as vLLM")
	}
}

func TestReaderKVSourceSelection(t *testing.T) {
	body := readFile(t, filepath.Join("testdata", "vllm_prefill_flagcx.txt"))
	r := NewReader(EngineAuto, Prefill, KVNIXL)
	o, err := r.Read(body, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.CounterSum(KVBytes); ok {
		t.Error("FlagCX bytes read although kv_source is nixl")
	}
	if _, ok := o.CounterSum(Completed); !ok {
		t.Error("completions lost with a KV source filter")
	}
}

func TestReaderOpenMetrics(t *testing.T) {
	// The same vLLM counters in OpenMetrics: family names without _total,
	// _created samples inside the family, # EOF.
	body := `# TYPE vllm:request_success counter
# HELP vllm:request_success Count of successfully processed requests.
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 10.0
vllm:request_success_created{engine="0",finished_reason="length",model_name="m"} 1.7e+09
vllm:request_success_total{engine="0",finished_reason="abort",model_name="m"} 2.0
vllm:request_success_created{engine="0",finished_reason="abort",model_name="m"} 1.7e+09
# TYPE vllm:flagcx_total_bytes_transferred counter
vllm:flagcx_total_bytes_transferred_total{engine="0",model_name="m"} 4096.0
# EOF
`
	r := NewReader(EngineAuto, Prefill, KVAuto)
	o, err := r.Read([]byte(body), "application/openmetrics-text; version=1.0.0; charset=utf-8")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := o.CounterSum(Completed); v != 10 {
		t.Errorf("completions = %v, want 10", v)
	}
	if v, _ := o.CounterSum(KVBytes); v != 4096 {
		t.Errorf("kv bytes = %v, want 4096", v)
	}
}

func TestReaderCacheSteadyState(t *testing.T) {
	// A second read of an identical body gives identical values and uses
	// the cached bindings (no label materialisation).
	body := readFile(t, filepath.Join("testdata", "vllm_prefill_flagcx.txt"))
	r := NewReader(EngineAuto, Prefill, KVAuto)
	o1, err := r.Read(body, "")
	if err != nil {
		t.Fatal(err)
	}
	first, _ := o1.CounterSum(Completed)
	n := len(r.cache)
	o2, err := r.Read(body, "")
	if err != nil {
		t.Fatal(err)
	}
	second, _ := o2.CounterSum(Completed)
	if first != second || len(r.cache) != n {
		t.Errorf("second read: completions %v vs %v, cache %d vs %d", first, second, len(r.cache), n)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := r.Read(body, ""); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 10 {
		t.Errorf("steady-state read allocates %v times, want ≤ 10", allocs)
	}
}

func TestReaderTensorRTLLM(t *testing.T) {
	for _, file := range []string{"trtllm_worker.txt", "trtllm_worker_unprefixed.txt"} {
		r := NewReader(EngineAuto, Decode, KVAuto)
		o, err := r.Read(readFile(t, filepath.Join("testdata", file)), "")
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// stop 900 + length 100; "cancelled" is not a completion, and the
		// iteration counter (1006) is a fallback for builds without per-request stats.
		if v, _ := o.CounterSum(Completed); v != 1000 {
			t.Errorf("%s: completions = %v, want 1000", file, v)
		}
		if v, _ := o.CounterSum(Aborted); v != 6 {
			t.Errorf("%s: cancelled = %v, want 6", file, v)
		}
		if v, _ := o.Gauge(Running); v != 37 {
			t.Errorf("%s: running = %v", file, v)
		}
		if o.Engine != TensorRTLLM || o.Model != "" {
			t.Errorf("%s: engine %q model %q (\"undefined\" is no model)", file, o.Engine, o.Model)
		}
		h := o.Histograms[E2E.HistogramIndex()]
		if h.Count != 20 || math.Abs(h.Sum-26) > 1e-9 {
			t.Errorf("%s: e2e count/sum %v/%v, want 20/26", file, h.Count, h.Sum)
		}
		kv, ok := o.CounterSum(KVBytes)
		if file == "trtllm_worker.txt" && (!ok || kv != 25*gib) {
			t.Errorf("%s: Dynamo KV bytes = %v (%v), want 25 GiB", file, kv, ok)
		}
	}
	// The disaggregated front server: one URL, read once per role.
	body := readFile(t, filepath.Join("testdata", "trtllm_disagg_server.txt"))
	for role, want := range map[Role]float64{Prefill: 500, Decode: 480} {
		r := NewReader(TensorRTLLM, role, KVAuto)
		o, err := r.Read(body, "")
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := o.CounterSum(Completed); v != want {
			t.Errorf("disagg server as %s: completions = %v, want %v", role, v, want)
		}
	}
	// The real excerpt: unprefixed, labels "undefined".
	r := NewReader(EngineAuto, Decode, KVAuto)
	o, err := r.Read(readFile(t, filepath.Join("testdata", "reports", "trtllm_issue_2004_aibrix_prometheus.txt")), "")
	if err != nil {
		t.Fatal(err)
	}
	if h := o.Histograms[E2E.HistogramIndex()]; o.Engine != TensorRTLLM || !h.HasSum || h.Sum != 3.4878239994868636 || len(h.Buckets) != 3 {
		t.Errorf("aibrix excerpt: engine %s, e2e %+v", o.Engine, h)
	}
}

// toOpenMetrics rewrites a Python-client text exposition the way the same
// client writes OpenMetrics (which it sends whenever the Accept header names
// OpenMetrics): counter families lose _total, _created becomes a sample of
// its family, and the body ends with # EOF.
func toOpenMetrics(text string) string {
	var out []string
	created := map[string][]string{} // family → its _created samples
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "# HELP ") || strings.HasPrefix(l, "# TYPE ") {
			name := strings.Fields(l)[2]
			if base, ok := strings.CutSuffix(name, "_created"); ok {
				// Skip the separate _created gauge family; keep its samples.
				for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "#") {
					i++
					fam := base
					if _, isCounter := created[base+"_total"]; isCounter {
						fam = base + "_total"
					}
					created[fam] = append(created[fam], lines[i])
				}
				continue
			}
			if strings.HasPrefix(l, "# TYPE ") && strings.HasSuffix(l, " counter") {
				l = strings.Replace(l, name, strings.TrimSuffix(name, "_total"), 1)
				created[name] = nil
			} else if strings.HasPrefix(l, "# HELP ") && strings.HasSuffix(name, "_total") && i+1 < len(lines) && strings.HasSuffix(lines[i+1], " counter") {
				l = strings.Replace(l, name, strings.TrimSuffix(name, "_total"), 1)
			}
		}
		out = append(out, l)
	}
	// Put each family's _created samples after its samples.
	var final []string
	cur := ""
	flush := func() {
		if cur != "" {
			final = append(final, created[cur]...)
		}
	}
	for _, l := range out {
		if strings.HasPrefix(l, "# HELP ") {
			flush()
			cur = ""
		}
		if strings.HasPrefix(l, "# TYPE ") {
			cur = strings.Fields(l)[2]
			if _, ok := created[cur+"_total"]; ok {
				cur += "_total"
			}
		}
		final = append(final, l)
	}
	flush()
	return strings.Join(final, "\n") + "\n# EOF\n"
}

func TestReaderOpenMetricsMatchesText(t *testing.T) {
	for _, file := range []string{"vllm_prefill_flagcx.txt", "vllm_decode_nixl.txt"} {
		text := readFile(t, filepath.Join("testdata", file))
		om := toOpenMetrics(string(text))
		rt, ro := NewReader(EngineAuto, Prefill, KVAuto), NewReader(EngineAuto, Prefill, KVAuto)
		a, err := rt.Read(text, "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		b, err := ro.Read([]byte(om), "application/openmetrics-text; version=1.0.0; charset=utf-8")
		if err != nil {
			t.Fatalf("%s as OpenMetrics: %v\n%s", file, err, om[:min(len(om), 2000)])
		}
		for m := Metric(0); m < numCounters; m++ {
			x, okx := a.CounterSum(m)
			y, oky := b.CounterSum(m)
			if x != y || okx != oky {
				t.Errorf("%s: %s text %v (%v), OpenMetrics %v (%v)", file, m, x, okx, y, oky)
			}
		}
		if a.Gauges != b.Gauges || a.HasGauges != b.HasGauges {
			t.Errorf("%s: gauges differ: %v vs %v", file, a.Gauges, b.Gauges)
		}
		for i := range a.Histograms {
			if a.Histograms[i].Count != b.Histograms[i].Count || len(a.Histograms[i].Buckets) != len(b.Histograms[i].Buckets) {
				t.Errorf("%s: histogram %s differs", file, HistogramAt(i))
			}
		}
	}
}

// Ray's dashboards query vLLM's names as ray_vllm:<name> (the colon kept):
// that spelling is detected and read too.
func TestReaderRayColonSpelling(t *testing.T) {
	o, err := NewReader(EngineAuto, Decode, KVAuto).Read([]byte(
		"ray_vllm:num_requests_running{ReplicaId=\"r1\",engine=\"0\",model_name=\"q\"} 3\n"+
			"ray_vllm:request_success_total{ReplicaId=\"r1\",engine=\"0\",finished_reason=\"stop\",model_name=\"q\"} 9\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := o.CounterSum(Completed); o.Engine != RayVLLM || v != 9 {
		t.Errorf("engine %s, completions %v; want ray-vllm, 9", o.Engine, v)
	}
}
