package reqtrace_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

const base = 73510.0

// build writes the lines (shuffled: files are in completion order, not
// arrival order) and runs the whole pipeline.
func build(t *testing.T, lines []string, cs *reqtrace.ClockSync, u reqtrace.Usage) *reqtrace.Report {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	fr, err := reqtrace.ReadJSONL(strings.NewReader(strings.Join(lines, "\n")+"\n"), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Skipped) > 0 {
		t.Fatalf("skipped lines: %v", fr.Skipped)
	}
	return reqtrace.Build([]reqtrace.FileResult{fr}, cs, u, reqtrace.Options{Top: 5})
}

func byID(rep *reqtrace.Report) map[reqtrace.ID]reqtrace.Request {
	m := map[reqtrace.ID]reqtrace.Request{}
	for _, q := range rep.Requests {
		m[q.ID] = q
	}
	return m
}

// noNegatives is the invariant: a span shown is never negative or NaN.
func noNegatives(t *testing.T, rep *reqtrace.Report) {
	t.Helper()
	for _, q := range rep.Requests {
		for s, v := range q.Spans {
			if v.OK && (v.Seconds < 0 || math.IsNaN(v.Seconds)) {
				t.Fatalf("request %s: %s shown as %v", q.ID, reqtrace.Span(s), v.Seconds)
			}
			if !v.OK && v.Reason == "" {
				t.Fatalf("request %s: %s missing without a reason", q.ID, reqtrace.Span(s))
			}
		}
	}
}

func within(t *testing.T, id reqtrace.ID, s reqtrace.Span, got reqtrace.Value, want float64) {
	t.Helper()
	if !got.OK {
		t.Errorf("request %s: %s missing (%s), want %.9f", id, s, got.Reason, want)
		return
	}
	if d := math.Abs(got.Seconds - want); d > 1e-6 {
		t.Errorf("request %s: %s = %.9f, want %.9f (off by %.3g s)", id, s, got.Seconds, want, d)
	}
}

type genFormat struct {
	name   string
	line   func(reqtracetest.Timeline, reqtracetest.Offsets) string
	hasKV  bool
	format string
}

var formats = []genFormat{
	{"A", func(t reqtracetest.Timeline, o reqtracetest.Offsets) string { return t.DisaggA(o) }, true, "disagg/A"},
	{"B", func(t reqtracetest.Timeline, o reqtracetest.Offsets) string { return t.DisaggB(o) }, false, "disagg/B"},
	{"C", func(t reqtracetest.Timeline, o reqtracetest.Offsets) string { return t.DisaggC(o, true) }, true, "disagg/C"},
}

// offs: the gen worker's clock runs 30 s behind the disagg clock (more than
// any generated E2E, so every unaligned E2E and decode comes out negative),
// the ctx worker's 1.25 s ahead.
var offs = reqtracetest.Offsets{Ctx: 1.25, Gen: -30}

func probes() []byte {
	return reqtracetest.ClockSyncJSON(
		// Asymmetric, slow probes first: they would give a wrong offset.
		reqtracetest.ProbeSpec{Server: reqtracetest.GenServer, Originate: base - 100, Out: 0.004, Proc: 0.2, Back: 0.0001, Offset: offs.Gen},
		reqtracetest.ProbeSpec{Server: reqtracetest.GenServer, Originate: base - 90, Out: 0.0002, Proc: 0.2, Back: 0.0002, Offset: offs.Gen, AsHeader: true},
		reqtracetest.ProbeSpec{Server: reqtracetest.GenServer, Originate: base - 80, Out: 0.0001, Proc: 0.2, Back: 0.009, Offset: offs.Gen},
		reqtracetest.ProbeSpec{Server: "http://" + reqtracetest.CtxServer + "/", Originate: base - 70, Out: 0.0003, Proc: 0.2, Back: 0.0003, Offset: offs.Ctx},
	)
}

func TestRequestsTruthUnaligned(t *testing.T) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			tl := reqtracetest.Timelines(200, 7, base)
			var lines []string
			for _, x := range tl {
				lines = append(lines, f.line(x, offs))
			}
			u, err := reqtrace.ParseUsage(reqtracetest.UsageJSON(tl))
			if err != nil {
				t.Fatal(err)
			}
			rep := build(t, lines, nil, u)
			noNegatives(t, rep)
			if rep.Formats[f.format] != len(tl) {
				t.Fatalf("formats = %v, want %d %s", rep.Formats, len(tl), f.format)
			}
			got := byID(rep)
			for _, x := range tl {
				w, q := x.Want(), got[reqtrace.ID(uintText(x.ID))]
				// Same-clock spans are right without alignment.
				within(t, q.ID, reqtrace.Queue, q.Spans[reqtrace.Queue], w.Queue)
				within(t, q.ID, reqtrace.Prefill, q.Spans[reqtrace.Prefill], w.Prefill)
				within(t, q.ID, reqtrace.TTFT, q.Spans[reqtrace.TTFT], w.TTFT)
				if f.hasKV {
					within(t, q.ID, reqtrace.KVTransfer, q.Spans[reqtrace.KVTransfer], w.KV)
				} else if kv := q.Spans[reqtrace.KVTransfer]; kv.OK || !strings.Contains(kv.Reason, "no gen.kv_cache_transfer_start") {
					t.Fatalf("gen B KV = %+v, want missing for lack of kv_cache_transfer_start", kv)
				}
				// Cross-machine spans come out negative: missing, with reason.
				for _, s := range []reqtrace.Span{reqtrace.E2E, reqtrace.Decode} {
					if v := q.Spans[s]; v.OK || !strings.HasPrefix(v.Reason, "negative: gen.last_token_time before disagg_") {
						t.Fatalf("request %s: unaligned %s = %+v, want missing as negative", q.ID, s, v)
					}
				}
				if v := q.Spans[reqtrace.TPOT]; v.OK {
					t.Fatalf("TPOT %v from a missing decode", v)
				}
			}
			d := rep.Dist[reqtrace.E2E]
			if d.Count != 0 || d.Missing != len(tl) || len(d.MissingBy) != 1 || d.MissingBy[0].Count != len(tl) {
				t.Fatalf("e2e distribution %+v: want all %d missing for one reason", d, len(tl))
			}
			if rep.ClockBroken != len(tl) {
				t.Fatalf("ClockBroken = %d, want %d", rep.ClockBroken, len(tl))
			}
			if len(rep.Slowest) != 0 {
				t.Fatalf("slowest lists requests without a trusted e2e")
			}
		})
	}
}

func TestRequestsTruthAligned(t *testing.T) {
	cs, err := reqtrace.ParseClockSync(probes())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			tl := reqtracetest.Timelines(200, 11, base)
			var lines []string
			for _, x := range tl {
				lines = append(lines, f.line(x, offs))
			}
			u, err := reqtrace.ParseUsage(reqtracetest.UsageJSON(tl))
			if err != nil {
				t.Fatal(err)
			}
			rep := build(t, lines, cs, u)
			noNegatives(t, rep)
			if rep.ClockBroken != 0 || len(rep.Unprobed) != 0 {
				t.Fatalf("ClockBroken=%d Unprobed=%v after alignment", rep.ClockBroken, rep.Unprobed)
			}
			got := byID(rep)
			if len(got) != len(tl) {
				t.Fatalf("%d requests, want %d", len(got), len(tl))
			}
			for _, x := range tl {
				w, q := x.Want(), got[reqtrace.ID(uintText(x.ID))]
				if !q.CtxAligned || !q.GenAligned {
					t.Fatalf("request %s not aligned", q.ID)
				}
				within(t, q.ID, reqtrace.Queue, q.Spans[reqtrace.Queue], w.Queue)
				within(t, q.ID, reqtrace.Prefill, q.Spans[reqtrace.Prefill], w.Prefill)
				within(t, q.ID, reqtrace.TTFT, q.Spans[reqtrace.TTFT], w.TTFT)
				within(t, q.ID, reqtrace.E2E, q.Spans[reqtrace.E2E], w.E2E)
				within(t, q.ID, reqtrace.Decode, q.Spans[reqtrace.Decode], w.Decode)
				within(t, q.ID, reqtrace.TPOT, q.Spans[reqtrace.TPOT], w.TPOT)
				if f.hasKV {
					within(t, q.ID, reqtrace.KVTransfer, q.Spans[reqtrace.KVTransfer], w.KV)
				}
				if len(q.Violations) != 0 {
					t.Fatalf("request %s: violations %+v on a true timeline", q.ID, q.Violations)
				}
			}
			// The slowest list is the true top 5 by E2E.
			want := append([]reqtracetest.Timeline(nil), tl...)
			for i := range want {
				for j := i + 1; j < len(want); j++ {
					if want[j].Want().E2E > want[i].Want().E2E {
						want[i], want[j] = want[j], want[i]
					}
				}
			}
			for i, q := range rep.Slowest {
				if q.ID != reqtrace.ID(uintText(want[i].ID)) {
					t.Fatalf("slowest[%d] = %s, want %d", i, q.ID, want[i].ID)
				}
			}
		})
	}
}

// A gen clock that runs ahead inflates E2E without making it negative;
// the causal chain (gen first token after the disagg server saw it)
// catches it, and E2E/decode are missing rather than wrong.
func TestRequestsGenClockAheadCaughtByChain(t *testing.T) {
	tl := reqtracetest.Timelines(50, 3, base)
	var lines []string
	for _, x := range tl {
		lines = append(lines, x.DisaggC(reqtracetest.Offsets{Gen: 2}, true))
	}
	rep := build(t, lines, nil, nil)
	noNegatives(t, rep)
	for _, q := range rep.Requests {
		for _, s := range []reqtrace.Span{reqtrace.E2E, reqtrace.Decode} {
			if v := q.Spans[s]; v.OK || !strings.HasPrefix(v.Reason, "clock unaligned: ") {
				t.Fatalf("request %s: %s = %+v, want missing as clock unaligned", q.ID, s, v)
			}
		}
		if !q.Spans[reqtrace.KVTransfer].OK || !q.Spans[reqtrace.Queue].OK {
			t.Fatalf("same-clock spans lost: %+v", q.Spans)
		}
	}
}

func TestRequestsMissingKVTimestamps(t *testing.T) {
	tl := reqtracetest.Timelines(20, 5, base)
	var lines []string
	for i, x := range tl {
		lines = append(lines, x.DisaggC(reqtracetest.Offsets{}, i%2 == 0))
	}
	rep := build(t, lines, nil, nil)
	noNegatives(t, rep)
	d := rep.Dist[reqtrace.KVTransfer]
	if d.Count != 10 || d.Missing != 10 || len(d.MissingBy) != 1 || d.MissingBy[0].Reason != "no gen.kv_cache_transfer_start" {
		t.Fatalf("kv distribution %+v", d)
	}
	if rep.Dist[reqtrace.E2E].Count != 20 {
		t.Fatalf("e2e lost with KV: %+v", rep.Dist[reqtrace.E2E])
	}
}

func uintText(v uint64) string {
	const digits = "0123456789"
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = digits[v%10]
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}
