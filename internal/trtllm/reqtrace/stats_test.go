package reqtrace_test

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

// bruteRank is the definition itself: the smallest observed value v with at
// least p% of the values ≤ v.
func bruteRank(vals []float64, p int) float64 {
	var cands []float64
	for _, v := range vals {
		le := 0
		for _, w := range vals {
			if w <= v {
				le++
			}
		}
		if le*100 >= p*len(vals) {
			cands = append(cands, v)
		}
	}
	sort.Float64s(cands)
	return cands[0]
}

func TestRequestsNearestRankBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(250)
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(rng.IntN(40)) / 8 // ties on purpose
		}
		sorted := append([]float64(nil), vals...)
		sort.Float64s(sorted)
		for _, p := range []int{1, 10, 50, 90, 99, 100} {
			if got, want := reqtrace.NearestRank(sorted, p), bruteRank(vals, p); got != want {
				t.Fatalf("n=%d p%d = %v, want %v", n, p, got, want)
			}
		}
		// Through the distribution code too.
		reqs := make([]reqtrace.Request, n)
		for i, v := range vals {
			reqs[i].Spans[reqtrace.Queue] = reqtrace.Value{Seconds: v, OK: true}
			reqs[i].Spans[reqtrace.Prefill] = reqtrace.Value{Reason: "r"}
		}
		d := reqtrace.Distribute(reqs)
		q := d[reqtrace.Queue]
		if q.P50 != bruteRank(vals, 50) || q.P90 != bruteRank(vals, 90) || q.P99 != bruteRank(vals, 99) || q.Count != n {
			t.Fatalf("distribution %+v", q)
		}
		if p := d[reqtrace.Prefill]; p.Count != 0 || p.Missing != n || p.MissingBy[0] != (reqtrace.ReasonCount{Reason: "r", Count: n}) {
			t.Fatalf("missing distribution %+v", p)
		}
	}
	// The classic case: p90 of 1..10 is 9, p99 is 10 (no interpolation).
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if reqtrace.NearestRank(ten, 90) != 9 || reqtrace.NearestRank(ten, 99) != 10 || reqtrace.NearestRank(ten, 50) != 5 {
		t.Fatal("nearest rank of 1..10")
	}
}

func TestRequestsShares(t *testing.T) {
	mk := func(q, p, kv, d, e float64) reqtrace.Request {
		var r reqtrace.Request
		for s, v := range map[reqtrace.Span]float64{reqtrace.Queue: q, reqtrace.Prefill: p, reqtrace.KVTransfer: kv, reqtrace.Decode: d, reqtrace.E2E: e} {
			r.Spans[s] = reqtrace.Value{Seconds: v, OK: v >= 0}
			if v < 0 {
				r.Spans[s].Reason = "x"
			}
		}
		return r
	}
	reqs := []reqtrace.Request{mk(1, 2, 1, 4, 10), mk(0, 1, -1, 5, 10)}
	got := reqtrace.Shares(reqs)
	want := map[string][2]float64{"queue": {1.0 / 20, 2}, "prefill": {3.0 / 20, 2}, "kv_transfer": {1.0 / 10, 1}, "decode": {9.0 / 20, 2}, "other": {2.0 / 10, 1}}
	for _, s := range got {
		w := want[s.Name]
		if s.Missing != "" || s.Fraction < w[0]-1e-12 || s.Fraction > w[0]+1e-12 || s.Requests != int(w[1]) {
			t.Errorf("share %+v, want %v", s, w)
		}
	}
}

func TestRequestsHTMLSelfContained(t *testing.T) {
	cs, _ := reqtrace.ParseClockSync(probes())
	tl := reqtracetest.Timelines(30, 1, base)
	var lines []string
	for _, x := range tl {
		lines = append(lines, x.DisaggC(offs, true))
	}
	lines = append(lines, `{"ctx_server":"<script>alert(1)</script>","disagg_server_arrival_time":1,"disagg_request_id":42}`)
	rep := build(t, lines, cs, nil)
	var buf bytes.Buffer
	if err := reqtrace.WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	h := buf.String()
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(h, bad) {
			t.Errorf("HTML contains %q", bad)
		}
	}
	if n := strings.Count(h, `<rect x="`); n < 5*5 {
		t.Errorf("waterfall has %d rects, want e2e plus 4 phases for each of 5 rows", n)
	}
	if !strings.Contains(h, "<svg") || !strings.Contains(h, uintText(tl[0].ID)[:10]) {
		t.Error("no SVG or no ids in the report")
	}
}
