package gen

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

type dashJSON struct {
	UID        string `json:"uid"`
	Refresh    string `json:"refresh"`
	Templating struct {
		List []struct{ Name string } `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		GridPos struct{ X, Y, W, H int }
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func TestDashboardsShape(t *testing.T) {
	files, err := Dashboards(Input{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file, uid string
		vars      []string
	}{
		{"ptdmon-overview.json", UIDOverview, []string{"datasource", "path", "pool", "model", "window"}},
		{"ptdmon-instance.json", UIDInstance, []string{"datasource", "path", "pool", "model", "window", "target"}},
	}
	for _, tt := range tests {
		var d dashJSON
		if err := json.Unmarshal(files[tt.file], &d); err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		// A refresh every Grafana accepts: its default min_refresh_interval.
		if d.UID != tt.uid || d.Refresh != "5s" {
			t.Errorf("%s: uid %q refresh %q", tt.file, d.UID, d.Refresh)
		}
		var vars []string
		for _, v := range d.Templating.List {
			vars = append(vars, v.Name)
		}
		if strings.Join(vars, ",") != strings.Join(tt.vars, ",") {
			t.Errorf("%s: variables %v, want %v", tt.file, vars, tt.vars)
		}
	}
	// The overview opens with the three stage rates in one panel, on one
	// axis, and the raw series sit below it.
	var d dashJSON
	if err := json.Unmarshal(files["ptdmon-overview.json"], &d); err != nil {
		t.Fatal(err)
	}
	first := d.Panels[1]
	if first.Type != "timeseries" || len(first.Targets) != 1 || !strings.HasPrefix(first.Targets[0].Expr, "stage:ptd_requests:${window}") {
		t.Fatalf("first panel %q: %+v", first.Title, first.Targets)
	}
	raw := map[string]int{}
	for _, p := range d.Panels {
		raw[p.Title] = p.GridPos.Y
	}
	for _, title := range []string{"Prefill running", "Decode running", "KV bytes/s", "KV bytes transferred (cumulative)"} {
		y, ok := raw[title]
		if !ok || y <= first.GridPos.Y {
			t.Errorf("raw series panel %q missing or not below the rates (y=%d)", title, y)
		}
	}
	// Latency quantiles are histogram_quantile over rate of the buckets.
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if strings.HasPrefix(tg.Expr, "histogram_quantile(") {
				n++
				if !strings.Contains(tg.Expr, "sum by (le") || !strings.Contains(tg.Expr, "(rate(") {
					t.Errorf("quantile query %q", tg.Expr)
				}
			}
		}
	}
	if n != 12 {
		t.Errorf("%d quantile queries, want TTFT/ITL/E2E × p50/p99 × vLLM/SGLang", n)
	}
}

// TestDashboardVerdictAdviceSLO: the overview shows what needs doing right
// under the stage rates, above the raw series: the verdict of the
// deployment and of each pool, the advised instances and KV bandwidth, and
// the SLO attainment; every refresh it offers Grafana accepts at its
// defaults or lists in its picker.
func TestDashboardVerdictAdviceSLO(t *testing.T) {
	files, err := Dashboards(Input{})
	if err != nil {
		t.Fatal(err)
	}
	var d dashJSON
	if err := json.Unmarshal(files["ptdmon-overview.json"], &d); err != nil {
		t.Fatal(err)
	}
	raw := -1
	at := map[string]int{}
	for _, p := range d.Panels {
		if p.Title == "Prefill running" {
			raw = p.GridPos.Y
		}
		for _, tg := range p.Targets {
			for _, m := range []string{"ptd_bottleneck_stage", "ptd_pool_bottleneck_stage", "ptd_recommended_instances", "ptd_recommended_kv_bytes_per_second", "role:ptd_slo_attainment:ratio_rate1m"} {
				if strings.HasPrefix(tg.Expr, m+" ") || strings.HasPrefix(tg.Expr, m+"{") || tg.Expr == m {
					at[m] = p.GridPos.Y
				}
			}
		}
	}
	if len(at) != 5 || raw < 0 {
		t.Fatalf("overview panels read %v; want the verdict, pool verdict, advice, KV advice and SLO series (raw series at y=%d)", at, raw)
	}
	for m, y := range at {
		if y >= raw {
			t.Errorf("%s at y=%d, below the raw series (y=%d)", m, y, raw)
		}
	}
	for name, b := range files {
		var dd struct {
			Refresh    string `json:"refresh"`
			Timepicker struct {
				Intervals []string `json:"refresh_intervals"`
			} `json:"timepicker"`
		}
		if err := json.Unmarshal(b, &dd); err != nil {
			t.Fatal(err)
		}
		// Grafana's default min_refresh_interval is 5s: a shorter
		// refresh is refused unless it is lowered.
		if dd.Refresh != "5s" || !slices.Contains(dd.Timepicker.Intervals, "1s") {
			t.Errorf("%s: refresh %q, picker %v; want 5s, and 1s to pick where Grafana allows it", name, dd.Refresh, dd.Timepicker.Intervals)
		}
	}
}
