package api

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Instances of constructed points: every value is chosen so that the
// right status, order and sum follow from the rules by hand.

const whyDown = "target down: connection refused"

// upInst is an up instance with its windowed rate, running and waiting.
func upInst(name, role, eng string, window, running, waiting float64) ledger.InstancePoint {
	to := time.Unix(1700000000, 0)
	return ledger.InstancePoint{Target: name, Role: role, Engine: eng, Up: true, WindowFrom: to.Add(-5 * time.Second), WindowTo: to,
		Instant: ledger.Val(window), Window: ledger.Val(window), Running: ledger.Val(running), Waiting: ledger.Val(waiting),
		KVUsage: ledger.Val(0.5), KVBytes: ledger.Absent("no KV connector"), KVBytesW: ledger.Absent("no KV connector")}
}

// downInst has every value absent, as the ledger writes a down target.
func downInst(name, role, eng string) ledger.InstancePoint {
	a := ledger.Absent(whyDown)
	return ledger.InstancePoint{Target: name, Role: role, Engine: eng, Instant: a, Window: a, KVBytes: a, KVBytesW: a,
		Running: a, Waiting: a, KVUsage: a, PromptTPS: a, GenTPS: a}
}

func point(ins ...ledger.InstancePoint) *ledger.Point {
	return &ledger.Point{Time: time.Unix(1700000000, 0), Instances: ins}
}

func rank(t *testing.T, p *ledger.Point, meta map[string]ledger.TargetMeta, query string) InstanceTable {
	t.Helper()
	v, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseInstanceQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	return RankInstances(p, meta, nil, 5, q)
}

func statuses(tb InstanceTable) map[string]string {
	out := map[string]string{}
	for _, r := range tb.Rows {
		out[r.Name] = r.Status
	}
	return out
}

func TestOutlierRules(t *testing.T) {
	// Four peers of one group and role at 20 req/s over 5 s (100
	// completions expected); p3 is the one under test.
	peers := func(w3, run3, wait3 float64, others ...float64) *ledger.Point {
		ins := []ledger.InstancePoint{}
		for i, w := range []float64{20, 20, 20} {
			wait := 2.0
			if len(others) > 0 {
				wait = others[i]
			}
			ins = append(ins, upInst(fmt.Sprintf("p%d", i), "prefill", "vllm", w, 4, wait))
		}
		return point(append(ins, upInst("p3", "prefill", "vllm", w3, run3, wait3))...)
	}
	f := func(name string, p *ledger.Point, want map[string]string, flag string) {
		t.Run(name, func(t *testing.T) {
			tb := rank(t, p, map[string]ledger.TargetMeta{"p1": {LastError: "dial tcp: connection refused"}}, "")
			got := statuses(tb)
			for n, w := range want {
				if got[n] != w {
					t.Errorf("%s: status %q, want %q (all: %v)", n, got[n], w, got)
				}
			}
			if flag == "" {
				return
			}
			for _, r := range tb.Rows {
				if strings.Contains(strings.Join(r.Flags, "|"), flag) {
					return
				}
			}
			t.Errorf("no row flagged %q: %+v", flag, tb.Rows)
		})
	}
	ok4 := map[string]string{"p0": StatusOK, "p1": StatusOK, "p2": StatusOK, "p3": StatusOK}
	f("a steady group has no outlier", peers(20, 4, 2), ok4, "")
	f("idle: no work and no completions is not stalled", peers(0, 0, 0), map[string]string{"p3": StatusOK}, "")
	f("stalled: work and no completions over W", peers(0, 3, 1), map[string]string{"p3": StatusStalled},
		"stalled: 0 completions in 5 s, peers' median 100")
	f("stalled with only waiting requests", peers(0, 0, 1), map[string]string{"p3": StatusStalled}, "")
	short := peers(0, 3, 1)
	short.Instances[3].WindowFrom = short.Instances[3].WindowTo.Add(-2 * time.Second)
	f("a window under W/2 is too short for a stall", short, map[string]string{"p3": StatusOK}, "")
	short.Instances[3].WindowFrom = short.Instances[3].WindowTo.Add(-2500 * time.Millisecond)
	f("a window of W/2 is long enough", short, map[string]string{"p3": StatusStalled}, "stalled: 0 completions in 2.5 s, peers' median 50")
	// Waiting 2,2,2,x: median 2, threshold max(4, 5) = 5.
	f("queued: exactly the threshold is not", peers(20, 4, 5), map[string]string{"p3": StatusOK}, "")
	f("queued: over max(2×median, median+3)", peers(20, 4, 6), map[string]string{"p3": StatusQueued}, "queued: 6 waiting, over 5")
	// Waiting 0,0,0,x: median 0, threshold 3.
	f("queued: a median of 0 needs more than 3", peers(20, 4, 3, 0, 0, 0), map[string]string{"p3": StatusOK}, "")
	f("queued: 4 over a median of 0", peers(20, 4, 4, 0, 0, 0), map[string]string{"p3": StatusQueued}, "")
	// Windows 20,20,20,x: median 20, slow under 10.
	f("slow: half the median is not", peers(10, 4, 2), map[string]string{"p3": StatusOK}, "")
	f("slow: under half the median", peers(9.9, 4, 2), map[string]string{"p3": StatusSlow}, "slow: 9.9 req/s over 5 s, peers' median 20")
	f("slow needs work", peers(5, 0, 0), map[string]string{"p3": StatusOK}, "")
	f("stalled outranks queued", peers(0, 4, 9), map[string]string{"p3": StatusStalled}, "queued: 9 waiting")
	f("queued outranks slow", peers(5, 4, 9), map[string]string{"p3": StatusQueued}, "slow: 5 req/s")
	// At 0.4 req/s over 5 s the peers' median completes 2 requests:
	// none is what one instance in e^2 ≈ 7 shows by chance.
	low := func(w3 float64) *ledger.Point {
		return point(upInst("p0", "decode", "vllm", 0.4, 2, 0), upInst("p1", "decode", "vllm", 0.4, 2, 0),
			upInst("p2", "decode", "vllm", 0.4, 2, 0), upInst("p3", "decode", "vllm", w3, 2, 0))
	}
	f("no completion at a low rate is chance, not a stall", low(0), map[string]string{"p3": StatusOK}, "")
	silent := low(0)
	for i := range silent.Instances {
		silent.Instances[i].Window = ledger.Val(0)
	}
	f("a whole silent group is stalled", silent, map[string]string{"p0": StatusStalled, "p3": StatusStalled},
		"stalled: 0 completions in 5 s on every vllm decode instance")
	// Median 2 req/s over 5 s: 10 expected; 4 completions (0.8 req/s)
	// happen with probability 0.029, 1 (0.2 req/s) with 5e-4, 0.4 of 10
	// with 1e-4 — below the 1e-4 only at 0 (4.5e-5).
	mid := func(w3 float64) *ledger.Point {
		return point(upInst("p0", "prefill", "vllm", 2, 4, 0), upInst("p1", "prefill", "vllm", 2, 4, 0),
			upInst("p2", "prefill", "vllm", 2, 4, 0), upInst("p3", "prefill", "vllm", w3, 4, 0))
	}
	f("slow: under half the median but likely by chance", mid(0.8), map[string]string{"p3": StatusOK}, "")
	f("slow: one completion of ten expected is still chance", mid(0.2), map[string]string{"p3": StatusOK}, "")
	f("stalled: none of ten expected is not", mid(0), map[string]string{"p3": StatusStalled}, "")
	f("down, with the scrape error", point(upInst("p0", "prefill", "vllm", 20, 4, 2), downInst("p1", "prefill", "vllm")),
		map[string]string{"p0": StatusOK, "p1": StatusDown}, "down: last scrape failed: dial tcp: connection refused")
	// Peers are the same verdict group and role: decode at 0.2 req/s is
	// not slow beside prefill at 2, and an SGLang prefill is not compared
	// with vLLM's.
	f("peers are per group and role", point(
		upInst("p0", "prefill", "vllm", 2, 4, 2), upInst("p1", "prefill", "vllm", 2, 4, 2), upInst("p2", "prefill", "vllm", 2, 4, 2),
		upInst("d0", "decode", "vllm", 0.2, 4, 2), upInst("s0", "prefill", "sglang", 0.2, 4, 2)),
		map[string]string{"d0": StatusOK, "s0": StatusOK}, "")
	// A down peer's absent values are not zeros in the median: without
	// it, waiting 0,0,5 has median 0 and 5 > 3.
	f("down peers stay out of the medians", point(
		upInst("p0", "prefill", "vllm", 2, 4, 0), upInst("p1", "prefill", "vllm", 2, 4, 0), upInst("p2", "prefill", "vllm", 2, 4, 5),
		downInst("p3", "prefill", "vllm"), downInst("p4", "prefill", "vllm")),
		map[string]string{"p2": StatusQueued}, "")
	absentWait := upInst("p3", "prefill", "vllm", 2, 4, 0)
	absentWait.Waiting = ledger.Absent("the engine exports no waiting gauge")
	f("an absent value flags nothing", point(upInst("p0", "prefill", "vllm", 2, 4, 2), upInst("p1", "prefill", "vllm", 2, 4, 2), absentWait),
		map[string]string{"p3": StatusOK}, "")
}

// fleet is one outlier of each kind among ok instances, in two groups.
// vLLM prefill windows over its up instances are 0, 0, 2, 20, 20, 20, 22
// req/s over 5 s (median 20, 100 completions expected: v-p4's 10 is slow,
// no completion is a stall) and its waiting 1 or 2 (median 1, no one over
// 4); vLLM decode waiting is 0, 0, 0, 9, 20 (median 0: over 3 is queued).
func fleet() (*ledger.Point, map[string]ledger.TargetMeta) {
	p := point(
		upInst("v-p0", "prefill", "vllm", 20, 4, 1),
		upInst("v-p1", "prefill", "vllm", 22, 4, 1),
		upInst("v-p2", "prefill", "vllm", 0, 3, 1), // stalled, 4 requests
		upInst("v-p3", "prefill", "vllm", 0, 1, 1), // stalled, 2 requests
		upInst("v-p4", "prefill", "vllm", 2, 4, 2), // slow
		downInst("v-p5", "prefill", "vllm"),
		upInst("v-p6", "prefill", "vllm", 20, 4, 1),
		upInst("v-p7", "prefill", "vllm", 20, 4, 1),
		upInst("v-d0", "decode", "vllm", 1, 8, 20), // queued
		upInst("v-d1", "decode", "vllm", 1, 8, 0),
		upInst("v-d2", "decode", "vllm", 1, 8, 0),
		upInst("v-d3", "decode", "vllm", 1, 8, 9), // queued
		upInst("v-d4", "decode", "vllm", 1, 8, 0),
		upInst("s-p0", "prefill", "sglang", 3, 4, 0),
		downInst("s-d0", "decode", "sglang"),
		upInst("s-d1", "decode", "sglang", 3, 4, 0),
	)
	meta := map[string]ledger.TargetMeta{
		"v-p5": {LastError: "connection refused", ModelLabel: "llama"},
		"s-d0": {LastError: "timeout"},
		"v-p0": {ModelLabel: "llama", Model: "meta-llama/Llama-3.1-8B"},
		"v-p1": {Model: "meta-llama/Llama-3.1-8B"},
	}
	return p, meta
}

func names(tb InstanceTable) []string {
	out := make([]string, len(tb.Rows))
	for i, r := range tb.Rows {
		out[i] = r.Name
	}
	return out
}

func TestRankInstances(t *testing.T) {
	p, meta := fleet()
	f := func(query string, want []string, matched int) {
		t.Run(query, func(t *testing.T) {
			tb := rank(t, p, meta, query)
			if got := names(tb); !slices.Equal(got, want) {
				t.Errorf("rows %v, want %v", got, want)
			}
			if tb.Matched != matched || tb.Total != 16 {
				t.Errorf("matched %d of %d, want %d of 16", tb.Matched, tb.Total, matched)
			}
		})
	}
	// Down by name, stalled by work, queued by waiting, slow, then the rest
	// by name.
	f("", []string{"s-d0", "v-p5", "v-p2", "v-p3", "v-d0", "v-d3", "v-p4",
		"s-d1", "s-p0", "v-d1", "v-d2", "v-d4", "v-p0", "v-p1", "v-p6", "v-p7"}, 16)
	f("order=asc&limit=3", []string{"s-d1", "s-p0", "v-d1"}, 16) // ties stay by name
	f("limit=2&offset=3", []string{"v-p3", "v-d0"}, 16)
	f("offset=99", []string{}, 16)
	f("status=down", []string{"s-d0", "v-p5"}, 2)
	f("status=stalled", []string{"v-p2", "v-p3"}, 2)
	f("status=queued", []string{"v-d0", "v-d3"}, 2)
	f("status=slow", []string{"v-p4"}, 1)
	f("status=outlier&limit=3", []string{"s-d0", "v-p5", "v-p2"}, 7)
	f("status=up&limit=1", []string{"v-p2"}, 14)
	f("q=SGLANG", []string{"s-d0", "s-d1", "s-p0"}, 3)
	f("q=refused", []string{"v-p5"}, 1)   // in the flag's text
	f("q=llama-3.1", []string{"v-p1"}, 1) // the exposition's model; v-p0's label wins
	f("q=queued", []string{"v-d0", "v-d3"}, 2)
	f("group=sglang/decode", []string{"s-d0", "s-d1"}, 2)
	f("group=nosuch", []string{}, 0)
	f("sort=waiting", []string{"v-d0", "v-d3", "v-p4", "v-p0", "v-p1", "v-p2", "v-p3", "v-p6", "v-p7",
		"s-d1", "s-p0", "v-d1", "v-d2", "v-d4", "s-d0", "v-p5"}, 16) // absent last
	f("sort=waiting&order=asc&limit=3", []string{"s-d1", "s-p0", "v-d1"}, 16)
	f("sort=waiting&order=asc&offset=14", []string{"s-d0", "v-p5"}, 16) // absent last in either order
	f("sort=requests_per_second_window&status=up&limit=4", []string{"v-p1", "v-p0", "v-p6", "v-p7"}, 14)
	f("sort=name&limit=3", []string{"s-d0", "s-d1", "s-p0"}, 16)
	f("sort=status&limit=3", []string{"s-d0", "v-p5", "v-p2"}, 16)
	f("sort=model&q=llama", []string{"v-p0", "v-p5", "v-p1"}, 3)
}

func TestInstanceGroups(t *testing.T) {
	p, meta := fleet()
	tb := rank(t, p, meta, "")
	wantCounts := map[string]int{"down": 2, "stalled": 2, "queued": 2, "slow": 1}
	for k, v := range wantCounts {
		if tb.Counts[k] != v {
			t.Errorf("counts[%s] = %d, want %d (%v)", k, tb.Counts[k], v, tb.Counts)
		}
	}
	// Worst first: vllm/prefill (1 down, 2 stalled), sglang/decode (1
	// down), vllm/decode (2 flagged), sglang/prefill.
	var ids []string
	for _, g := range tb.Groups {
		ids = append(ids, g.ID)
	}
	if want := []string{"vllm/prefill", "sglang/decode", "vllm/decode", "sglang/prefill"}; !slices.Equal(ids, want) {
		t.Fatalf("groups %v, want %v", ids, want)
	}
	vp := tb.Groups[0]
	if vp.Key["group"] != "vllm" || vp.Key["role"] != "prefill" || vp.Instances != 8 || vp.Up != 7 || vp.Down != 1 || vp.Stalled != 2 || vp.Flagged != 4 {
		t.Errorf("vllm/prefill: %+v", vp)
	}
	// Up instances' windows 20, 22, 0, 0, 2, 20, 20: sum 84, median 20;
	// waiting 1,1,1,1,2,1,1 = 8; running 4,4,3,1,4,4,4 = 24.
	f := func(name string, got *float64, want float64) {
		if got == nil || *got < want-1e-9 || *got > want+1e-9 {
			t.Errorf("vllm/prefill %s = %v, want %g", name, got, want)
		}
	}
	f("window", vp.Window, 84)
	f("median", vp.WindowMedian, 20)
	f("waiting", vp.Waiting, 8)
	f("running", vp.Running, 24)
	f("usage max", vp.KVUsageMax, 0.5)
	sd := tb.Groups[1]
	if sd.Window == nil || *sd.Window != 3 || sd.Reasons != nil {
		t.Errorf("sglang/decode sums over its up instance only: %+v", sd)
	}
	// A group with no up instance has its sums absent, with the reason.
	allDown := rank(t, point(downInst("a", "decode", "vllm")), nil, "")
	if g := allDown.Groups[0]; g.Window != nil || g.Reasons["requests_per_second_window"] != whyNoneUp || g.WindowMedian != nil {
		t.Errorf("all down group: %+v", g)
	}
	// by=model: the label, else the exposition's name, else absent.
	byModel := rank(t, p, meta, "by=model&status=down")
	var models []string
	for _, g := range byModel.Groups {
		models = append(models, fmt.Sprintf("%s:%d", g.ID, g.Instances))
	}
	if want := []string{"(no model):13", "llama:2", "meta-llama/Llama-3.1-8B:1"}; !slices.Equal(models, want) {
		t.Errorf("by=model groups %v, want %v", models, want)
	}
	for _, r := range byModel.Rows {
		if r.Name == "s-d0" && (r.Model != "" || r.Reasons["model"] != whyNoModel || r.LastError != "timeout") {
			t.Errorf("s-d0 row: %+v", r)
		}
	}
	// Grouping keys never change the statuses or the counts.
	byEngine := rank(t, p, meta, "by=engine")
	if !slices.Equal(names(byEngine), names(tb)) || fmt.Sprint(byEngine.Counts) != fmt.Sprint(tb.Counts) || len(byEngine.Groups) != 2 {
		t.Errorf("by=engine: %v %v %d groups", names(byEngine), byEngine.Counts, len(byEngine.Groups))
	}
	if empty := RankInstances(nil, nil, nil, 5, InstanceQuery{Limit: 50}); empty.T != nil || empty.Total != 0 || empty.Rows == nil {
		t.Errorf("no point: %+v", empty)
	}
}

func TestParseInstanceQuery(t *testing.T) {
	f := func(query, wantErr string) {
		t.Helper()
		v, _ := url.ParseQuery(query)
		_, err := ParseInstanceQuery(v)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s: %v", query, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s: error %v, want one naming %q", query, err, wantErr)
		}
	}
	f("by=model,role&sort=kv_cache_usage_ratio&order=asc&status=outlier&limit=500&offset=10", "")
	f("sort=queue_transfer", "")
	f("by=host", `by="host"`)
	f("sort=color", `sort="color"`)
	f("order=up", `order="up"`)
	f("status=sick", `status="sick"`)
	f("limit=501", `limit="501": want an integer from 0 to 500`)
	f("limit=-1", `limit="-1"`)
	f("offset=x", `offset="x"`)
	v, _ := url.ParseQuery("")
	q, _ := ParseInstanceQuery(v)
	if !slices.Equal(q.By, []string{"group", "role"}) || q.Sort != "outlier" || q.Limit != DefaultInstanceLimit || q.Asc {
		t.Errorf("defaults: %+v", q)
	}
}

// BenchmarkRankInstances5000 ranks a fleet of 5,000 instances (two engine
// groups of 1,250 prefill and 1,250 decode, 1% of them outliers) for one
// page of 50.
func BenchmarkRankInstances5000(b *testing.B) {
	p, meta := bigFleet(5000)
	q := InstanceQuery{By: []string{"group", "role"}, Sort: "outlier", Status: "all", Limit: 50}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tb := RankInstances(p, meta, nil, 5, q)
		if len(tb.Rows) != 50 || tb.Counts[StatusDown] == 0 {
			b.Fatalf("%d rows, counts %v", len(tb.Rows), tb.Counts)
		}
	}
}

func bigFleet(n int) (*ledger.Point, map[string]ledger.TargetMeta) {
	ins := make([]ledger.InstancePoint, 0, n)
	meta := make(map[string]ledger.TargetMeta, n)
	for i := 0; i < n; i++ {
		eng := []string{"vllm", "sglang"}[i%2]
		role := []string{"prefill", "decode"}[(i/2)%2]
		name := fmt.Sprintf("%s-%s%d", eng, role[:1], i/4)
		in := upInst(name, role, eng, 0.8+0.001*float64(i%97), 6, float64(i%5))
		switch i % 100 {
		case 7:
			in = downInst(name, role, eng)
		case 13:
			in.Window = ledger.Val(0)
		case 29:
			in.Waiting = ledger.Val(40)
		}
		ins = append(ins, in)
		meta[name] = ledger.TargetMeta{Model: "meta-llama/Llama-3.1-8B-Instruct", LastError: "connection refused"}
	}
	// In name order, as the ledger's points are.
	slices.SortFunc(ins, func(a, b ledger.InstancePoint) int { return strings.Compare(a.Target, b.Target) })
	return point(ins...), meta
}

// TestPoissonAtMost against closed forms and sums in exact rationals.
func TestPoissonAtMost(t *testing.T) {
	f := func(c, lambda, want float64) {
		t.Helper()
		if got := poissonAtMost(c, lambda); math.Abs(got-want) > 1e-9*max(want, 1e-300) && math.Abs(got-want) > 1e-15 {
			t.Errorf("P(X ≤ %g | λ=%g) = %g, want %g", c, lambda, got, want)
		}
	}
	f(0, 10, math.Exp(-10))
	f(1, 10, 11*math.Exp(-10))
	f(4, 10, math.Exp(-10)*(1+10+50+1000.0/6+10000.0/24)) // 0.0292527
	f(200, 3, 1)
	f(0, 0, 1)
	f(50, 100, 2.4015922356168156e-08) // e^-100 Σ 100^k/k! for k ≤ 50, summed in exact rationals
	f(100, 300, 0)
}
