package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
)

func trtScenario(t testing.TB) Scenario {
	t.Helper()
	sc, err := LoadScenario("trtllm")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// trtGroup returns the index of the scenario's TensorRT-LLM group.
func trtGroup(t testing.TB, sc Scenario) int {
	for i, g := range sc.Groups {
		if g.Engine == string(ptd.TensorRTLLM) {
			return i
		}
	}
	t.Fatal("no trtllm group")
	return -1
}

// Completions on a TensorRT-LLM worker equal the truth at every instant, in
// both namings, across a restart of the gen worker.
func TestTRTLLMExpositionMatchesTruth(t *testing.T) {
	for _, old := range []bool{false, true} {
		sc := trtScenario(t)
		gi := trtGroup(t, sc)
		sc.Groups[gi].TRTLLM.OldNames = old
		sc.Groups[gi].TRTLLM.UndefinedLabels = old
		sc.Restarts = []Restart{{Instance: "trt-d0", At: 20 * time.Second, Down: 2 * time.Second}}
		m, err := NewModel(sc, 5, testEpoch)
		if err != nil {
			t.Fatal(err)
		}
		prefix, wantET, wantModel := "trtllm_", "trtllm", sc.Model
		if old {
			prefix, wantET, wantModel = "", "undefined", "undefined"
		}
		checked := 0
		for _, at := range []time.Duration{0, 1500 * time.Millisecond, 10 * time.Second, 21 * time.Second,
			23*time.Second + 7, 40 * time.Second, 75 * time.Second} {
			m.AdvanceTo(at)
			tr := m.TruthAt(at)
			for _, in := range m.Instances() {
				if in.Engine != string(ptd.TensorRTLLM) {
					continue
				}
				body, f, err := m.Exposition(in.Name, nil)
				if m.Down(in.Name) {
					if err == nil {
						t.Fatalf("%s down but rendered", in.Name)
					}
					continue
				}
				if err != nil || f != (trtllmFormat{}) {
					t.Fatalf("%s: %v %v", in.Name, err, f)
				}
				fams := parseExpo(t, body)
				for name, fam := range fams {
					if strings.HasSuffix(name, "_created") {
						t.Errorf("%s: multiprocess exposition has %s", in.Name, name)
					}
					if !strings.HasPrefix(name, prefix) || (old && strings.HasPrefix(name, "trtllm_")) {
						t.Errorf("%s: family %s has the wrong prefix (old=%v)", in.Name, name, old)
					}
					for _, mt := range fam.GetMetric() {
						if v, _ := labelOf(mt, "engine_type"); v != wantET {
							t.Errorf("%s %s: engine_type=%q", in.Name, name, v)
						}
						if v, _ := labelOf(mt, "model_name"); v != wantModel {
							t.Errorf("%s %s: model_name=%q", in.Name, name, v)
						}
					}
				}
				done, _ := sumCounter(fams, prefix+"request_success_total", "finished_reason", "abort", "error")
				exp := tr.Instance(in.Name).Exported
				want := exp.PrefillCompleted
				if in.Role == RoleDecode {
					want = exp.DecodeCompleted
				}
				if int64(done) != want {
					t.Errorf("old=%v t=%v %s: request_success_total %v, truth %d", old, at, in.Name, done, want)
				}
				if !old {
					c, ok := sumCounter(fams, "trtllm_num_requests_completed_total", "")
					if !ok || int64(c) != want {
						t.Errorf("t=%v %s: num_requests_completed_total %v (%v), truth %d", at, in.Name, c, ok, want)
					}
					for _, g := range []string{"trtllm_num_requests_running", "trtllm_num_requests_waiting", "trtllm_kv_cache_utilization"} {
						if fams[g].GetType() != dto.MetricType_GAUGE {
							t.Errorf("%s: %s missing or not a gauge", in.Name, g)
						}
					}
				}
				if want > 0 {
					if h := fams[prefix+"e2e_request_latency_seconds"]; h == nil || int64(h.GetMetric()[0].GetHistogram().GetSampleCount()) != want {
						t.Errorf("t=%v %s: e2e histogram count != %d", at, in.Name, want)
					}
					if in.Role == RoleDecode {
						h := fams[prefix+"time_per_output_token_seconds"]
						if h == nil || int64(h.GetMetric()[0].GetHistogram().GetSampleCount()) != want {
							t.Errorf("t=%v %s: TPOT histogram count != %d", at, in.Name, want)
						} else if s := h.GetMetric()[0].GetHistogram().GetSampleSum(); math.Abs(s-float64(want)*0.025) > 1e-9 {
							t.Errorf("%s: TPOT sum %v, want %d × 25 ms", in.Name, s, want)
						}
					}
					checked++
				}
			}
		}
		if checked < 8 {
			t.Errorf("old=%v: only %d non-trivial comparisons", old, checked)
		}
	}
}

type iterRow struct {
	Timestamp                       string  `json:"timestamp"`
	Iter                            int64   `json:"iter"`
	IterLatencyMS                   float64 `json:"iterLatencyMS"`
	NewActiveRequestsQueueLatencyMS float64 `json:"newActiveRequestsQueueLatencyMS"`
	NumNewActiveRequests            int     `json:"numNewActiveRequests"`
	NumActiveRequests               int     `json:"numActiveRequests"`
	NumQueuedRequests               int     `json:"numQueuedRequests"`
	NumCompletedRequests            int     `json:"numCompletedRequests"`
	KVCacheStats                    struct {
		MaxNumBlocks, FreeNumBlocks, UsedNumBlocks, TokensPerBlock   int
		AllocTotalBlocks, AllocNewBlocks, ReusedBlocks, MissedBlocks int64
	} `json:"kvCacheStats"`
	InflightBatchingStats map[string]float64 `json:"inflightBatchingStats"`
	SchedulerMode         string             `json:"schedulerMode"`
	StatsSequence         int64              `json:"statsSequence"`
	StatsDroppedFrames    int64              `json:"statsDroppedFrames"`
	AttentionDpRank       int                `json:"attentionDpRank"`
	RequestStats          *[]struct {
		ID              json.Number `json:"id"`
		Stage           string      `json:"stage"`
		DisServingStats *struct {
			KVCacheTransferMS float64 `json:"kvCacheTransferMS"`
			KVCacheSize       int64   `json:"kvCacheSize"`
		} `json:"disServingStats"`
	} `json:"requestStats"`
}

func decodeRows(t *testing.T, body []byte) []iterRow {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var rows []iterRow
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("iteration stats: %v\n%s", err, head(body, 500))
	}
	if rows == nil {
		t.Fatalf("iteration stats: not an array: %s", head(body, 200))
	}
	return rows
}

// The JSON iteration stats are drained on read, fan out one row per
// attention-DP rank with rank-0-owned fields zero elsewhere, and add up to
// the truth: completions on both roles, KV bytes (disServingStats) on ctx.
func TestTRTLLMIterationStats(t *testing.T) {
	sc := trtScenario(t)
	m, err := NewModel(sc, 9, testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	type acc struct {
		done, kv, seq, iter int64
		alloc               map[int]int64
		lastTS              time.Time
	}
	sums := map[string]*acc{}
	engines := map[string]int{}
	for _, in := range m.Instances() {
		if in.Engine == string(ptd.TensorRTLLM) {
			sums[in.Name] = &acc{alloc: map[int]int64{}}
			engines[in.Name] = in.Engines
		}
	}
	if engines["trt-p0"] != 2 {
		t.Fatalf("want the ctx worker with attention DP 2, got %v", engines)
	}
	ids := 0
	for at := time.Second; at <= 70*time.Second; at += 700 * time.Millisecond {
		m.AdvanceTo(at)
		tr := m.TruthAt(at)
		for name, a := range sums {
			body, err := m.IterationStats(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := m.IterationStats(name, nil); string(again) != "[]" {
				t.Fatalf("%s: second read at the same instant gave %s", name, head(again, 200))
			}
			rows := decodeRows(t, body)
			n := engines[name]
			if len(rows)%n != 0 {
				t.Fatalf("%s: %d rows for %d ranks", name, len(rows), n)
			}
			for i, r := range rows {
				rank := i % n
				lead := rows[i-rank]
				if r.AttentionDpRank != rank || r.StatsSequence != lead.StatsSequence || r.Iter != lead.Iter || r.Timestamp != lead.Timestamp {
					t.Fatalf("%s row %d: rank %d seq %d iter %d, frame of rank 0: seq %d iter %d", name, i, r.AttentionDpRank, r.StatsSequence, r.Iter, lead.StatsSequence, lead.Iter)
				}
				if rank == 0 {
					if r.StatsSequence != a.seq || r.Iter != a.iter+1 || r.StatsDroppedFrames != 0 {
						t.Fatalf("%s: seq %d iter %d dropped %d after seq %d iter %d", name, r.StatsSequence, r.Iter, r.StatsDroppedFrames, a.seq, a.iter)
					}
					a.seq++
					a.iter = r.Iter
					if r.RequestStats == nil {
						t.Fatalf("%s: rank-0 row without requestStats", name)
					}
					a.done += int64(r.NumCompletedRequests)
					for _, rs := range *r.RequestStats {
						id, err := strconv.ParseUint(rs.ID.String(), 10, 64)
						if err != nil || id <= 1<<53 {
							t.Fatalf("%s: request id %s not a 64-bit snowflake above 2^53", name, rs.ID)
						}
						ids++
						if rs.DisServingStats != nil {
							if rs.Stage != "GENERATION_COMPLETE" || rs.DisServingStats.KVCacheTransferMS <= 0 {
								t.Errorf("%s: disServingStats on %+v", name, rs)
							}
							a.kv += rs.DisServingStats.KVCacheSize
						}
					}
					ts, err := time.ParseInLocation(trtTimestampLayout, r.Timestamp, time.Local)
					if err != nil || ts.Before(a.lastTS) || ts.After(testEpoch.Add(at)) || ts.Before(testEpoch) {
						t.Fatalf("%s: timestamp %q (%v) out of order or range", name, r.Timestamp, err)
					}
					a.lastTS = ts
				} else if r.NumQueuedRequests != 0 || r.NumCompletedRequests != 0 || r.NumNewActiveRequests != 0 ||
					r.NewActiveRequestsQueueLatencyMS != 0 || r.RequestStats != nil ||
					r.InflightBatchingStats["numQueuedContextRequests"] != 0 || r.InflightBatchingStats["numQueuedGenRequests"] != 0 {
					t.Fatalf("%s rank %d carries rank-0-owned fields: %+v", name, rank, r)
				}
				kv := r.KVCacheStats
				if kv.UsedNumBlocks+kv.FreeNumBlocks != kv.MaxNumBlocks || kv.FreeNumBlocks < 0 || kv.TokensPerBlock != trtTokensPerBlock {
					t.Fatalf("%s: kvCacheStats gauges inconsistent: %+v", name, kv)
				}
				if kv.AllocTotalBlocks < a.alloc[rank] || kv.AllocTotalBlocks != kv.AllocNewBlocks+kv.ReusedBlocks {
					t.Fatalf("%s rank %d: cumulative kvCacheStats went back or do not add up: %+v", name, rank, kv)
				}
				a.alloc[rank] = kv.AllocTotalBlocks
				if r.SchedulerMode != "overlap" {
					t.Fatalf("schedulerMode %q", r.SchedulerMode)
				}
			}
			it := tr.Instance(name)
			want := it.Exported.PrefillCompleted
			if it.Role == RoleDecode {
				want = it.Exported.DecodeCompleted
			}
			if a.done != want || a.kv != it.Exported.KVBytes {
				t.Fatalf("t=%v %s: iteration stats sum to %d completions and %d KV bytes, truth %d and %d",
					at, name, a.done, a.kv, want, it.Exported.KVBytes)
			}
		}
	}
	for name, a := range sums {
		if a.done == 0 || a.seq < 100 {
			t.Errorf("%s: only %d completions in %d records", name, a.done, a.seq)
		}
	}
	if sums["trt-p0"].kv == 0 || sums["trt-d0"].kv != 0 {
		t.Errorf("KV bytes belong on the ctx worker: %d on ctx, %d on gen", sums["trt-p0"].kv, sums["trt-d0"].kv)
	}
	if ids == 0 {
		t.Error("no requestStats entries")
	}
	if _, err := m.IterationStats("vllm-p0", nil); err == nil {
		t.Error("a vLLM instance served iteration stats")
	}
}

// A bounded queue drops the oldest records and says so; with an interval N
// a record is built every N iterations.
func TestTRTLLMIterationStatsBounded(t *testing.T) {
	sc := trtScenario(t)
	gi := trtGroup(t, sc)
	sc.Groups[gi].TRTLLM.IterStatsMax = 5
	sc.Groups[gi].TRTLLM.IterStatsInterval = 3
	m, err := NewModel(sc, 2, testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	m.AdvanceTo(30 * time.Second)
	body, err := m.IterationStats("trt-d0", nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := decodeRows(t, body)
	if len(rows) != 5 {
		t.Fatalf("bounded queue returned %d rows", len(rows))
	}
	for i, r := range rows {
		if r.Iter%3 != 0 || r.StatsDroppedFrames == 0 || (i > 0 && r.StatsSequence != rows[i-1].StatsSequence+1) {
			t.Fatalf("row %d: iter %d seq %d dropped %d", i, r.Iter, r.StatsSequence, r.StatsDroppedFrames)
		}
	}
	if last := rows[len(rows)-1]; last.StatsDroppedFrames != last.StatsSequence+1-5 {
		t.Errorf("dropped %d before seq %d with 5 kept", last.StatsDroppedFrames, last.StatsSequence)
	}
}

func httpGet(t *testing.T, url string) (string, []byte) {
	t.Helper()
	resp, err := testClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %v", url, resp.StatusCode, err)
	}
	return resp.Header.Get("Content-Type"), b
}

func TestTRTLLMOverHTTP(t *testing.T) {
	clk := &fakeClock{t: testEpoch}
	wall := 90*time.Minute + 250*time.Millisecond
	c, err := Start(t.Context(), trtScenario(t), Options{Seed: 4, Clock: clk.Now, Tick: time.Hour,
		WallClockOffsets: map[string]time.Duration{"trt-p0": wall}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clk.Set(testEpoch.Add(30 * time.Second))
	trt := c.Targets()[:0]
	for _, tg := range c.Targets() {
		if tg.Engine == ptd.TensorRTLLM {
			trt = append(trt, tg)
			if !strings.HasSuffix(tg.URL, "/prometheus/metrics") {
				t.Fatalf("TensorRT-LLM target %s", tg.URL)
			}
		} else if !strings.HasSuffix(tg.URL, "/metrics") || strings.Contains(tg.URL, "prometheus") {
			t.Fatalf("target %s", tg.URL)
		}
	}
	if len(trt) != 2 {
		t.Fatalf("%d TensorRT-LLM targets", len(trt))
	}
	tr := c.TruthAt(clk.Now())
	for _, tg := range trt {
		body, err := scrape(t, tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		fams := parseExpo(t, body)
		got, _ := sumCounter(fams, "trtllm_request_success_total", "")
		exp := tr.Instance(tg.Name).Exported
		if want := exp.PrefillCompleted + exp.DecodeCompleted; int64(got) != want || want == 0 {
			t.Errorf("%s: %v completions, truth %d", tg.Name, got, want)
		}
		iterURL := strings.TrimSuffix(tg.URL, "/prometheus/metrics") + "/metrics"
		ct, first := httpGet(t, iterURL)
		if ct != "application/json" {
			t.Errorf("iteration stats content type %q", ct)
		}
		rows := decodeRows(t, first)
		if len(rows) == 0 {
			t.Fatalf("%s: no iteration stats after 30 s", tg.Name)
		}
		if _, second := httpGet(t, iterURL); string(second) != "[]" {
			t.Fatalf("%s: second GET returned %s", tg.Name, head(second, 200))
		}
		ts, err := time.ParseInLocation(trtTimestampLayout, rows[len(rows)-1].Timestamp, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := testEpoch, testEpoch.Add(30*time.Second)
		if tg.Name == "trt-p0" {
			lo, hi = lo.Add(wall), hi.Add(wall)
		}
		if ts.Before(lo) || ts.After(hi) {
			t.Errorf("%s: timestamp %s not within [%v, %v]", tg.Name, rows[len(rows)-1].Timestamp, lo, hi)
		}
	}
	// The control server serves the perf records and the probes.
	ct, recs := httpGet(t, c.ControlURL()+"/perf_records.jsonl")
	if ct != "application/jsonl" || bytes.Count(recs, []byte("\n")) == 0 {
		t.Errorf("perf records: %q, %d bytes", ct, len(recs))
	}
	if _, cs := httpGet(t, c.ControlURL()+"/clock_sync.json"); !json.Valid(cs) {
		t.Errorf("clock sync is not JSON: %s", head(cs, 200))
	}
	var js Truth
	getJSON(t, c.TruthURL(), &js) // the control server's own routes still work
}

// The perf-metrics JSONL parses with exact 64-bit ids, keeps the causal
// chain once the per-worker offsets are removed, and ptdmon's request
// ledger recovers the modelled E2E from it with the clock-sync probes.
func TestTRTLLMPerfRecords(t *testing.T) {
	clk := &fakeClock{t: testEpoch}
	offsets := map[string]time.Duration{"trt-p0": 1234*time.Second + 500*time.Millisecond, "trt-d0": -321 * time.Second}
	c, err := Start(t.Context(), trtScenario(t), Options{Seed: 6, Clock: clk.Now, Tick: time.Hour, SteadyClockOffsets: offsets})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clk.Set(testEpoch.Add(60 * time.Second))
	var jsonl, probes bytes.Buffer
	if err := c.WritePerfRecords(&jsonl); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteClockSync(&probes); err != nil {
		t.Fatal(err)
	}
	truth := c.TRTLLMRecords()
	if want := c.TruthAt(clk.Now()).Instance("trt-d0").DecodeCompleted; int64(len(truth)) != want || want < 50 {
		t.Fatalf("%d records, %d decode completions on trt-d0", len(truth), want)
	}
	sc := bufio.NewScanner(bytes.NewReader(jsonl.Bytes()))
	sc.Buffer(nil, 1<<20)
	i := 0
	var e2e []float64
	for sc.Scan() {
		line := sc.Bytes()
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var rec struct {
			CtxServer string      `json:"ctx_server"`
			Status    string      `json:"status"`
			ID        json.Number `json:"disagg_request_id"`
			Ctx       struct {
				RequestID json.Number `json:"request_id"`
				PM        struct {
					TM map[string]float64 `json:"timing_metrics"`
				} `json:"perf_metrics"`
			} `json:"ctx_perf_metrics"`
			Gen struct {
				PM struct {
					TM map[string]float64 `json:"timing_metrics"`
				} `json:"perf_metrics"`
			} `json:"gen_perf_metrics"`
			DisaggArrival float64 `json:"disagg_server_arrival_time"`
			DisaggFirst   float64 `json:"disagg_server_first_token_time"`
		}
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		x := truth[i]
		if rec.ID.String() != strconv.FormatUint(x.ID, 10) || rec.Ctx.RequestID.String() != rec.ID.String() || x.ID <= 1<<53 {
			t.Fatalf("line %d: id %s, want %d (> 2^53)", i+1, rec.ID, x.ID)
		}
		if f, _ := strconv.ParseFloat(rec.ID.String(), 64); uint64(f) == x.ID && x.ID%2 == 1 {
			t.Fatalf("id %d survives float64: not a useful test id", x.ID)
		}
		if rec.Status != "complete" || rec.CtxServer == "" || rec.DisaggArrival != x.DisaggArrival {
			t.Fatalf("line %d: %s", i+1, line)
		}
		oc, og := offsets["trt-p0"].Seconds(), offsets["trt-d0"].Seconds()
		if d := rec.Ctx.PM.TM["arrival_time"] - oc - x.CtxArrival; math.Abs(d) > 1e-6 {
			t.Fatalf("ctx arrival off by %v", d)
		}
		if d := rec.Gen.PM.TM["last_token_time"] - og - x.GenLast; math.Abs(d) > 1e-6 {
			t.Fatalf("gen last token off by %v", d)
		}
		chain := []float64{x.DisaggArrival, x.Dispatch, x.CtxSrvArrival, x.CtxArrival, x.CtxSched, x.CtxFirst,
			x.CtxSrvFirst, x.GenSrvArrival, x.GenArrival, x.KVStart, x.KVEnd, x.GenSched, x.GenFirst, x.GenSrvFirst, x.DisaggFirst}
		for k := 1; k < len(chain); k++ {
			if !(chain[k] > chain[k-1]) && !(k == 4 && chain[k] == chain[k-1]) {
				t.Fatalf("request %d: causal chain broken at step %d: %v", x.ID, k, chain)
			}
		}
		if x.GenLast <= x.GenFirst || x.OutputTokens != 256 {
			t.Fatalf("request %d: last token %v, first %v, %d tokens", x.ID, x.GenLast, x.GenFirst, x.OutputTokens)
		}
		e2e = append(e2e, x.E2E)
		i++
	}
	if i != len(truth) {
		t.Fatalf("%d lines, %d records", i, len(truth))
	}

	fr, err := reqtrace.ReadJSONL(bytes.NewReader(jsonl.Bytes()), "sim.jsonl")
	if err != nil || len(fr.Skipped) > 0 || len(fr.Records) != len(truth) {
		t.Fatalf("reqtrace read %d records, skipped %v, err %v", len(fr.Records), fr.Skipped, err)
	}
	cs, err := reqtrace.ParseClockSync(probes.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for name, off := range offsets {
		e, ok := cs.Lookup(reqtrace.NormalizeServer(c.serverOf(name)))
		if !ok || math.Abs(e.Offset-off.Seconds()) > 30e-6 {
			t.Errorf("%s: estimated offset %+v, configured %v", name, e, off)
		}
	}
	var usage bytes.Buffer
	if err := c.WriteUsage(&usage); err != nil {
		t.Fatal(err)
	}
	u, err := reqtrace.ParseUsage(usage.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	rep := reqtrace.Build([]reqtrace.FileResult{fr}, cs, u, reqtrace.Options{})
	if rep.ClockBroken != 0 || len(rep.Unprobed) != 0 {
		t.Errorf("aligned report: %d causal-chain breaks, unprobed %v", rep.ClockBroken, rep.Unprobed)
	}
	d := rep.Dist[reqtrace.E2E]
	slices.Sort(e2e)
	want := reqtrace.NearestRank(e2e, 50)
	if d.Count != len(truth) || math.Abs(d.P50-want) > 1e-3 {
		t.Errorf("ptdmon median E2E %.6f s over %d requests, modelled %.6f s over %d", d.P50, d.Count, want, len(truth))
	}
	if tp := rep.Dist[reqtrace.TPOT]; tp.Count != len(truth) || math.Abs(tp.P50-0.025) > 1e-5 {
		t.Errorf("ptdmon TPOT p50 %.6f s over %d requests, modelled 25 ms (step time)", tp.P50, tp.Count)
	}
	raw := reqtrace.Build([]reqtrace.FileResult{fr}, nil, nil, reqtrace.Options{})
	if raw.ClockBroken == 0 {
		t.Error("unaligned clocks 1555 s apart went unnoticed: the offsets are not applied")
	}
}

// A restarted worker starts a fresh iteration-stats queue: sequence and
// iteration numbers from the start, counts since the new process started.
func TestTRTLLMIterationStatsRestart(t *testing.T) {
	sc := trtScenario(t)
	sc.Restarts = []Restart{{Instance: "trt-d0", At: 20 * time.Second, Down: 2 * time.Second}}
	m, err := NewModel(sc, 3, testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	m.AdvanceTo(19 * time.Second)
	if body, err := m.IterationStats("trt-d0", nil); err != nil || len(decodeRows(t, body)) == 0 {
		t.Fatalf("before the restart: %v", err)
	}
	m.AdvanceTo(21 * time.Second)
	if _, err := m.IterationStats("trt-d0", nil); err == nil {
		t.Fatal("a down worker served iteration stats")
	}
	m.AdvanceTo(35 * time.Second)
	rows := decodeRows(t, must(m.IterationStats("trt-d0", nil)))
	if len(rows) == 0 || rows[0].StatsSequence != 0 || rows[0].Iter != 1 {
		t.Fatalf("after the restart the first record is seq %d iter %d", rows[0].StatsSequence, rows[0].Iter)
	}
	done := 0
	for _, r := range rows {
		done += r.NumCompletedRequests
	}
	it := m.TruthAt(35 * time.Second).Instance("trt-d0")
	if it.Restarts != 1 || int64(done) != it.Exported.DecodeCompleted || done == 0 {
		t.Fatalf("after the restart: %d completions in the stats, %+v in the truth", done, it)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func BenchmarkTRTLLMRender(b *testing.B) {
	sc := trtScenario(b)
	m, err := NewModel(sc, 1, testEpoch)
	if err != nil {
		b.Fatal(err)
	}
	m.AdvanceTo(30 * time.Second)
	buf := make([]byte, 0, 64<<10)
	b.Run("prometheus", func(b *testing.B) {
		for b.Loop() {
			buf, _, _ = m.Exposition("trt-d0", buf[:0])
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("iterstats-1s", func(b *testing.B) { // one second of generation steps, then drain
		at := 30 * time.Second
		for b.Loop() {
			at += time.Second
			m.AdvanceTo(at)
			buf, _ = m.IterationStats("trt-d0", buf[:0])
		}
	})
}
