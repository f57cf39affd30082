package inspect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/engine"
)

func read(t *testing.T, name string, role engine.Role) Inspection {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "engine", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	rd := engine.NewReader(engine.EngineAuto, role, engine.KVAuto)
	rd.Explain()
	obs, err := rd.Read(body, "")
	if err != nil {
		t.Fatal(err)
	}
	found, err := engine.Detect(body, "")
	if err != nil {
		t.Fatal(err)
	}
	return Of(name, obs, found)
}

// TestSummary: the summary holds every canonical value of the full
// description and counts the ignored families by reason, in a few lines.
func TestSummary(t *testing.T) {
	f := func(name string, role engine.Role, want ...string) {
		t.Run(name, func(t *testing.T) {
			in := read(t, name, role)
			var b strings.Builder
			if err := in.WriteSummary(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("summary lacks %q:\n%s", w, out)
				}
			}
			for c := range in.Counters {
				if !strings.Contains(out, "\n  "+c+" ") {
					t.Errorf("summary lacks counter %s", c)
				}
			}
			for g := range in.Gauges {
				if !strings.Contains(out, "\n  "+g+" ") {
					t.Errorf("summary lacks gauge %s", g)
				}
			}
			total := 0
			for _, r := range reasons(in.Ignored) {
				total += r.n
				if !strings.Contains(out, r.reason) {
					t.Errorf("summary lacks the reason %q", r.reason)
				}
			}
			if total != len(in.Ignored) {
				t.Errorf("reasons count %d families, %d ignored", total, len(in.Ignored))
			}
			// A page, not the hundreds of lines of the JSON with its buckets.
			full, _ := json.MarshalIndent(in, "", "  ")
			if lines := strings.Count(out, "\n"); lines > 60 {
				t.Errorf("summary of %d lines (JSON: %d)", lines, strings.Count(string(full), "\n"))
			}
		})
	}
	f("vllm_prefill_flagcx.txt", engine.Prefill, "engine     vllm\n", "role       prefill\n", "requests_completed                 1993")
	f("sglang_prefill.txt", "", "engine     sglang\n", "role       prefill\n")
	f("vllm_decode_nixl.txt", "", "role       unknown (pass -role prefill|decode)")
	// Transfer libraries and the routers are recognised by their names.
	f("nixl_telemetry.txt", engine.Prefill, "engine     nixl-telemetry\n", "prefix     agent_ (14 families)\n", "kv_transfer_failures_network       8")
	f("mooncake_te.txt", engine.Prefill, "engine     mooncake-te\n", "kv_transfers_inflight              3\n")
	f("dynamo_frontend.txt", "", "engine     dynamo-frontend\n", "role       router (in front of the prefill and decode instances; its requests are the arrivals)\n", "active_prefill_tokens              4096")
	f("llmd_epp.txt", "", "engine     llm-d-epp\n", "role       router (", "router_decode_only_decisions       400\n", "router_requests                    1000  (2 series)")
	f("sglang_gateway.txt", "", "engine     sglang-gateway\n", "role       router (", "router_requests                    500  (2 series)")
	f("vllm_router.txt", "", "engine     vllm-router\n", "role       router (", "frontend_requests                  800  (2 series)")
	// The busy-time signals.
	f("sglang_busy.txt", "", "scheduler_idle_seconds             200  (2 series)", "forward_occupancy_ratio            0.7\n")
	f("trtllm_worker_iter.txt", engine.Decode, "iteration_latency_seconds          0.025\n", "kv_cache_blocks                    8192\n",
		"kv_cache_blocks_used               6144\n", "requests_generation                48\n")
	f("vllm_busy.txt", engine.Prefill, "kv_cache_blocks                    80000\n", "kv_cache_block_size_tokens         16\n", "iteration_tokens")
	// The other spelling of the finish reason is read, and said.
	f("llmd_inference_sim.txt", engine.Decode, "requests_completed                 45", "requests_aborted                   3",
		"vllm:request_success_total: the finish reason is read from the label finish_reason, not finished_reason")
}
