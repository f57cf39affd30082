package api

import (
	"fmt"
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
	return RankInstances(p, meta, 5, q)
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
	if empty := RankInstances(nil, nil, 5, InstanceQuery{Limit: 50}); empty.T != nil || empty.Total != 0 || empty.Rows == nil {
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
		tb := RankInstances(p, meta, 5, q)
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
