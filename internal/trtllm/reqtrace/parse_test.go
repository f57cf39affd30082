package reqtrace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
)

// Worker lines of docs/trtllm.md#worker-record (generation B/C) and
// docs/trtllm.md#generation-a (a generation-A item).
const workerBC = `{"request_id":1234422892527625,"perf_metrics":{"timing_metrics":{"arrival_time":91233.104551,"first_scheduled_time":91233.109830,"first_token_time":91233.241007,"last_token_time":91236.882140,"kv_cache_transfer_start":91233.105913,"kv_cache_transfer_end":91233.108702,"kv_cache_size":402653184,"server_arrival_time":91233.101260,"server_first_token_time":91233.242391},"first_iter":48810,"last_iter":49061,"kv_cache_metrics":{"num_total_allocated_blocks":97,"num_new_allocated_blocks":97,"num_reused_blocks":0,"num_missed_blocks":96},"speculative_decoding":{"acceptance_rate":0.61,"total_accepted_draft_tokens":183,"total_draft_tokens":300}},"ctx_request_id":1234422892527625,"time_breakdown_metrics":{"step_metrics":[{"iter":48811,"forward_start_time":91233.24151,"forward_end_time":91233.25402,"sample_start_time":91233.25402,"sample_end_time":91233.25463,"gpu_forward_time":11.8,"gpu_sample_time":0.4}]},"status":"complete","disagg_request_id":1234422892527625}`

const workerA = `{"request_id":17,"perf_metrics":{"first_iter":3,"last_iter":9,"timing_metrics":{"server_arrival_time":100.0,"arrival_time":100.5,"first_scheduled_time":100.75,"first_token_time":101.0,"server_first_token_time":101.25,"last_token_time":103.0},"kv_cache_metrics":{"num_total_allocated_blocks":1,"num_new_allocated_blocks":1,"num_reused_blocks":0,"num_missed_blocks":1}}}`

func parse1(t *testing.T, line string) reqtrace.Record {
	t.Helper()
	recs, err := reqtrace.ParseLine([]byte(line), reqtrace.Pos{File: "x", Line: 1})
	if err != nil || len(recs) != 1 {
		t.Fatalf("ParseLine: %v, %d records", err, len(recs))
	}
	return recs[0]
}

func TestRequestsWorkerRecords(t *testing.T) {
	r := parse1(t, workerBC)
	if r.Kind != reqtrace.KindWorker || r.Gen != reqtrace.GenBC || r.ID != "1234422892527625" {
		t.Fatalf("record %+v", r)
	}
	q := reqtrace.Compute(r, nil, nil)
	// Worker spans use one clock: numbers straight from the example.
	checks := map[reqtrace.Span]float64{
		reqtrace.Queue: 91233.109830 - 91233.104551, reqtrace.Prefill: 91233.241007 - 91233.109830,
		reqtrace.KVTransfer: 91233.108702 - 91233.105913, reqtrace.TTFT: 91233.241007 - 91233.104551,
		reqtrace.E2E: 91236.882140 - 91233.104551, reqtrace.Decode: 91236.882140 - 91233.241007,
	}
	for s, want := range checks {
		within(t, q.ID, s, q.Spans[s], want)
	}
	if v := q.Spans[reqtrace.TPOT]; v.OK || v.Reason != "no usage for request" {
		t.Fatalf("TPOT %+v", v)
	}

	a := parse1(t, workerA)
	if a.Gen != reqtrace.GenA || a.ID != "17" {
		t.Fatalf("gen A worker %+v", a)
	}
	qa := reqtrace.Compute(a, nil, reqtrace.Usage{"17": {PromptTokens: 5, CompletionTokens: 9}})
	within(t, "17", reqtrace.TPOT, qa.Spans[reqtrace.TPOT], 2.0/8)
	if v := qa.Spans[reqtrace.KVTransfer]; v.OK || v.Reason != "no worker.kv_cache_transfer_start" {
		t.Fatalf("KV %+v", v)
	}
}

func TestRequestsGenAArrayAndAliases(t *testing.T) {
	// A saved GET /perf_metrics response: an array on one line; null ctx
	// phase; the early "_ts" spelling of the first-token key.
	line := `[{"ctx_server":"http://c:1","gen_server":"http://g:2","disagg_server_arrival_time":10,"disagg_server_first_token_ts":10.5,"ctx_perf_metrics":null,"gen_perf_metrics":{"request_id":"req-x","perf_metrics":{"timing_metrics":{"arrival_time":10.1,"first_scheduled_time":10.2,"first_token_time":10.4,"last_token_time":12}}}},` + workerA + `]`
	recs, err := reqtrace.ParseLine([]byte(line), reqtrace.Pos{File: "x", Line: 1})
	if err != nil || len(recs) != 2 {
		t.Fatalf("%v %d", err, len(recs))
	}
	r := recs[0]
	if r.ID != "req-x" || r.Ctx.Present || !r.GenPhase.Present || r.GenPhase.Server != "g:2" || r.DisaggFirstToken != 10.5 {
		t.Fatalf("record %+v", r)
	}
	q := reqtrace.Compute(r, nil, nil)
	within(t, r.ID, reqtrace.TTFT, q.Spans[reqtrace.TTFT], 0.5)
	within(t, r.ID, reqtrace.E2E, q.Spans[reqtrace.E2E], 2)
	if v := q.Spans[reqtrace.Queue]; v.OK || v.Reason != "no ctx phase" {
		t.Fatalf("queue %+v", v)
	}
}

// Zero, null, negative and absent timestamps are all unknown, never 0.
func TestRequestsUnknownIsNotZero(t *testing.T) {
	line := `{"ctx_server":"c:1","gen_server":"g:2","disagg_server_arrival_time":10,"disagg_ctx_dispatch_time":null,"disagg_server_first_token_time":null,"status":"complete","ctx_perf_metrics":{"request_id":5,"perf_metrics":{"timing_metrics":{"arrival_time":0,"first_scheduled_time":-1,"first_token_time":10.4,"last_token_time":10.4}}},"gen_perf_metrics":{"request_id":5,"perf_metrics":{"timing_metrics":{"arrival_time":10.5,"last_token_time":11,"kv_cache_transfer_start":0,"kv_cache_transfer_end":10.6}}},"disagg_request_id":5}`
	q := reqtrace.Compute(parse1(t, line), nil, nil)
	want := map[reqtrace.Span]string{
		reqtrace.Queue: "no ctx.arrival_time", reqtrace.Prefill: "no ctx.first_scheduled_time",
		reqtrace.KVTransfer: "no gen.kv_cache_transfer_start", reqtrace.TTFT: "no disagg_server_first_token_time",
		reqtrace.Decode: "no disagg_server_first_token_time", reqtrace.TPOT: "no usage for request",
	}
	for s, reason := range want {
		if v := q.Spans[s]; v.OK || v.Reason != reason {
			t.Errorf("%s = %+v, want missing %q", s, v, reason)
		}
	}
	within(t, q.ID, reqtrace.E2E, q.Spans[reqtrace.E2E], 1)
}

// Ids above 2^53 survive exactly; a float64 round trip would not.
func TestRequestsLargeIDsExact(t *testing.T) {
	const id = "9007199254740993"
	if strconv.FormatFloat(float64(9007199254740993), 'f', -1, 64) == id {
		t.Fatal("test premise: float64 must not represent the id")
	}
	for _, line := range []string{
		strings.ReplaceAll(workerBC, "1234422892527625", id),
		`{"ctx_server":"c:1","gen_server":"g:2","disagg_server_arrival_time":1,"disagg_ctx_dispatch_time":null,"disagg_server_first_token_time":2,"status":"complete","gen_perf_metrics":{"request_id":` + id + `,"perf_metrics":{"timing_metrics":{"arrival_time":1.5,"last_token_time":3}}},"disagg_request_id":` + id + `}`,
		`{"ctx_server":"c:1","gen_server":"g:2","disagg_server_arrival_time":1,"disagg_server_first_token_time":2,"ctx_perf_metrics":{"request_id":18446744073709551615,"perf_metrics":{"timing_metrics":{}}},"gen_perf_metrics":null}`,
	} {
		r := parse1(t, line)
		if r.ID != id && r.ID != "18446744073709551615" {
			t.Fatalf("id %q", r.ID)
		}
	}
	for _, bad := range []string{`{"request_id":1.5,"perf_metrics":{}}`, `{"request_id":18446744073709551616,"perf_metrics":{}}`, `{"request_id":{},"perf_metrics":{}}`} {
		if _, err := reqtrace.ParseLine([]byte(bad), reqtrace.Pos{}); err == nil {
			t.Errorf("accepted id in %s", bad)
		}
	}
}

func TestRequestsReadJSONLMalformedAndOrder(t *testing.T) {
	in := workerA + "\n\n" + `{"request_id":18,"perf_metr` + "\n" + `{"iter":5,"numActiveRequests":3}` + "\n" + strings.ReplaceAll(workerA, `"request_id":17`, `"request_id":3`) // no final newline: torn tail
	fr, err := reqtrace.ReadJSONL(strings.NewReader(in), "w.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if fr.Lines != 4 || len(fr.Records) != 2 || len(fr.Skipped) != 2 {
		t.Fatalf("lines=%d records=%d skipped=%v", fr.Lines, len(fr.Records), fr.Skipped)
	}
	if got := fr.Skipped[0].Error(); !strings.HasPrefix(got, "w.jsonl:3: ") {
		t.Fatalf("position %q, want w.jsonl:3", got)
	}
	if got := fr.Skipped[1]; got.Pos.Line != 4 || !errors.Is(got, reqtrace.ErrUnrecognized) {
		t.Fatalf("second skip %v", got)
	}
	if fr.Records[1].Pos.Line != 5 || fr.NotJSONL() {
		t.Fatalf("record position %v", fr.Records[1].Pos)
	}
	notJSONL, _ := reqtrace.ReadJSONL(strings.NewReader("# HELP x\nx 1\n"), "m.txt")
	if !notJSONL.NotJSONL() {
		t.Fatal("a Prometheus text file passed as JSONL")
	}
	for _, in := range []string{"", "[]\n[]\n"} { // no requests completed between polls
		empty, _ := reqtrace.ReadJSONL(strings.NewReader(in), "e")
		if empty.NotJSONL() {
			t.Fatalf("%q is not the wrong format", in)
		}
	}
}

func TestRequestsLongLine(t *testing.T) {
	// A legitimate line longer than the reader's buffer must still parse.
	steps := strings.Repeat(`{"iter":1,"forward_start_time":1.0,"forward_end_time":1.1},`, 5000)
	line := strings.Replace(workerBC, `"step_metrics":[`, `"step_metrics":[`+steps, 1)
	fr, err := reqtrace.ReadJSONL(strings.NewReader(line+"\n"+workerA+"\n"), "big")
	if err != nil || len(fr.Records) != 2 || len(fr.Skipped) != 0 || fr.Records[1].Pos.Line != 2 {
		t.Fatalf("err=%v records=%d skipped=%v", err, len(fr.Records), fr.Skipped)
	}
}

func TestRequestsUsage(t *testing.T) {
	u, err := reqtrace.ParseUsage([]byte(`{"usage":{"9007199254740993":{"prompt_tokens":8192,"completion_tokens":300}}}`))
	if err != nil || u["9007199254740993"].CompletionTokens != 300 {
		t.Fatalf("%v %v", u, err)
	}
	for _, bad := range []string{`[]`, `{"1":{"completion_tokens":1.5}}`, `{"1":{"completion_tokens":-3}}`} {
		if _, err := reqtrace.ParseUsage([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestRequestsJSONOutputKeepsIDs(t *testing.T) {
	const id = "9007199254740993"
	fr, _ := reqtrace.ReadJSONL(strings.NewReader(strings.ReplaceAll(workerBC, "1234422892527625", id)+"\n"), "f")
	rep := reqtrace.Build([]reqtrace.FileResult{fr}, nil, nil, reqtrace.Options{Top: 3})
	var buf bytes.Buffer
	if err := reqtrace.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Requests []struct {
			ID      json.Number       `json:"id"`
			Spans   map[string]any    `json:"spans_seconds"`
			Missing map[string]string `json:"missing"`
		} `json:"requests"`
		Slowest []struct{ ID string } `json:"slowest"`
	}
	d := json.NewDecoder(&buf)
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Requests[0].ID.String() != id || out.Slowest[0].ID != id {
		t.Fatalf("ids %v / %v", out.Requests[0].ID, out.Slowest[0].ID)
	}
	if _, ok := out.Requests[0].Spans["tpot"]; ok || out.Requests[0].Missing["tpot"] == "" {
		t.Fatalf("missing tpot rendered as a number: %+v", out.Requests[0])
	}
	buf.Reset()
	if err := reqtrace.WriteText(&buf, rep); err != nil || !strings.Contains(buf.String(), id) {
		t.Fatalf("text lacks id %s: %v\n%s", id, err, buf.String())
	}
}
