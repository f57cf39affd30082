package api

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ptdmon/ptdmon/internal/metrics"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// TestAdviceEndpoint serves a ledger filled from a prefill-bound simulated
// run over loopback HTTP: /api/v1/advice sizes prefill for the what-if
// load from the learned capacity, decode stays unknown with the reason,
// and /metrics exports the same numbers (and nothing for unknowns).
func TestAdviceEndpoint(t *testing.T) {
	srv := simulatedServer(t, "prefill-bound", 2, 150*time.Second)
	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}

	code, b := get("/api/v1/advice?multiplier=1.5&headroom=0.25")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, b)
	}
	var body struct {
		Advice struct {
			Demand struct {
				Observed *float64 `json:"observed_requests_per_second"`
				Target   *float64 `json:"target_requests_per_second"`
			} `json:"demand"`
			Prefill struct {
				Instances *float64          `json:"instances"`
				Absent    map[string]string `json:"absent"`
			} `json:"prefill"`
			Decode struct {
				Instances *float64          `json:"instances"`
				AtMost    *float64          `json:"at_most"`
				Absent    map[string]string `json:"absent"`
			} `json:"decode"`
			Capacities []struct {
				Stage       string   `json:"stage"`
				PerInstance *float64 `json:"requests_per_second_per_instance"`
				Total       *float64 `json:"requests_per_second"`
				Basis       string   `json:"basis"`
				Utilisation *float64 `json:"utilisation"`
			} `json:"capacities"`
		} `json:"advice"`
		SLOAbsent string `json:"slo_absent"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	a := body.Advice
	if a.Demand.Observed == nil || a.Demand.Target == nil || math.Abs(*a.Demand.Target-1.5**a.Demand.Observed) > 1e-9 {
		t.Fatalf("demand: %s", b)
	}
	per := a.Capacities[0].PerInstance
	if per == nil || math.Abs(*per-3) > 0.3 {
		t.Fatalf("prefill capacity: %s", b)
	}
	want := math.Ceil(*a.Demand.Target / (*per * 0.75))
	if a.Prefill.Instances == nil || *a.Prefill.Instances != want {
		t.Errorf("prefill instances %v, want %g: %s", a.Prefill.Instances, want, b)
	}
	if a.Decode.Instances != nil || !strings.Contains(a.Decode.Absent["instances"], "not known until decode saturates") || a.Decode.AtMost == nil {
		t.Errorf("decode: %s", b)
	}
	if !strings.Contains(body.SLOAbsent, "no SLO threshold") {
		t.Errorf("no reason for the missing SLO attainment: %q", body.SLOAbsent)
	}

	code, b = get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// Each series by its stage, and its basis where it has one.
	basis := map[string]string{}
	byStage := func(name string) map[string]float64 {
		out := map[string]float64{}
		if f := fams[name]; f != nil {
			for _, m := range f.Metric {
				var st, b string
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "stage":
						st = l.GetValue()
					case "basis":
						b = l.GetValue()
					}
				}
				basis[name+"/"+st] = b
				out[st] = m.GetGauge().GetValue()
			}
		}
		return out
	}
	rec, capy := byStage("ptd_recommended_instances"), byStage("ptd_stage_capacity_requests_per_second")
	if _, ok := rec["decode"]; ok || rec["prefill"] < 1 {
		t.Errorf("ptd_recommended_instances: %v", rec)
	}
	if len(capy) != 1 || math.Abs(capy["prefill"]-*a.Capacities[0].Total) > 1e-9 || basis["ptd_stage_capacity_requests_per_second/prefill"] != a.Capacities[0].Basis {
		t.Errorf("ptd_stage_capacity_requests_per_second: %v (%v), want only prefill = %v (%s)", capy, basis, *a.Capacities[0].Total, a.Capacities[0].Basis)
	}
	// Utilisation wherever the API has one, with the same basis.
	util := byStage(metrics.NameStageUtilisation)
	for _, c := range a.Capacities {
		got, ok := util[c.Stage]
		switch {
		case c.Utilisation == nil && ok:
			t.Errorf("%s: utilisation %v on /metrics, absent in the API", c.Stage, got)
		case c.Utilisation != nil && (!ok || math.Abs(got-*c.Utilisation) > 1e-9 || basis[metrics.NameStageUtilisation+"/"+c.Stage] != c.Basis):
			t.Errorf("%s: utilisation %v (%s) on /metrics, %v (%s) in the API", c.Stage, got, basis[metrics.NameStageUtilisation+"/"+c.Stage], *c.Utilisation, c.Basis)
		}
	}
	if len(util) == 0 {
		t.Error("no ptd_stage_utilisation series")
	}

	if bin, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(bin, "check", "metrics")
		cmd.Stdin = strings.NewReader(string(b))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else if os.Getenv("CI") != "" {
		t.Fatal("promtool not installed (CI installs Debian's prometheus package)")
	}

	for _, bad := range []string{"multiplier=0", "multiplier=x", "rate=-1", "headroom=1", "headroom=NaN", "lookback=-5s", "lookback=5"} {
		if code, b := get("/api/v1/advice?" + bad); code != http.StatusBadRequest || len(b) == 0 {
			t.Errorf("%s: %d %s", bad, code, b)
		}
	}
}

// simulatedServer serves, over loopback HTTP, the ledger of a simulated run
// of the built-in scenario name.
func simulatedServer(t *testing.T, name string, seed int64, d time.Duration) *httptest.Server {
	t.Helper()
	sc, err := sim.LoadScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	l, _, _, err := simtest.Run(sc, seed, d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	t.Cleanup(srv.Close)
	return srv
}
