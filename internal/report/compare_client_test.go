package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
)

// TestCompareClientViews: report A B puts the two runs' client figures side
// by side, from reports read back from their JSON, as a user compares two
// rounds written with -format json.
func TestCompareClientViews(t *testing.T) {
	side := func(dur time.Duration, file string, body func(r benchgenRun) []byte) (*Report, benchgenFigures) {
		in, run, _ := simBench(t, dur)
		res, err := benchresult.Read(file, body(run))
		if err != nil {
			t.Fatal(err)
		}
		in.Bench = &res
		r, err := Build(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		js, err := r.JSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(js)
		if err != nil {
			t.Fatal(err)
		}
		return back, run.Figures()
	}
	a, fa := side(60*time.Second, "vllm.json", benchgenRun.VLLM)
	b, fb := side(90*time.Second, "profile_export.jsonl", benchgenRun.AIPerfRecords)
	c := Compare(a, b, "round1.json", "round2.json")
	d := c.Client
	if d == nil || d.Tools != [2]string{"vllm bench serve", "aiperf"} {
		t.Fatalf("client comparison %+v", d)
	}
	want := map[string][2]float64{
		"completed":            {float64(fa.Completed), float64(fb.Completed)},
		"request rate (req/s)": {fa.RequestRate, fb.RequestRate},
		"TTFT p99 (s)":         {fa.TTFT.P99, fb.TTFT.P99},
	}
	for _, row := range d.Rows {
		w, ok := want[row.What]
		if !ok {
			continue
		}
		delete(want, row.What)
		near := func(got *float64, want float64) bool {
			return got != nil && math.Abs(*got-want) <= 1e-9*math.Max(1, math.Abs(want))
		}
		if !near(row.Values[0], w[0]) || !near(row.Values[1], w[1]) || !near(row.Diff, w[1]-w[0]) {
			t.Errorf("%s: %v, want %v", row.What, row.Values, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
	if md := string(c.Markdown()); !strings.Contains(md, "## The load generators' view") || !strings.Contains(md, "| completed |") {
		t.Error("the Markdown comparison lacks the client view")
	}
	html, err := c.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `<table id="client">`) {
		t.Error("the HTML comparison lacks the client view")
	}
}
