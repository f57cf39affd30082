package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/engine"
)

// The made-up engine of TestRegisterNewEngine: its own prefix, a
// completion counter split by a finish-reason label, gauges, a latency
// histogram and a KV connector of its own.
const (
	madeUp     engine.Engine   = "madeup"
	madeUpLink engine.KVSource = "madeuplink"
	// Ground truth of its exposition: completions and KV transfers per
	// second, cancelled requests per second (not completions), B_request.
	madeUpRate, madeUpCancelled, madeUpBytes = 40.0, 5.0, 1e6
)

// registerMadeUp registers the made-up engine exactly as docs/adapters.md
// says to add one (one Register call, one RegisterConnector call) and
// removes it when the test ends.
func registerMadeUp(t *testing.T) {
	engine.Register(engine.Adapter{
		Engine: madeUp, Display: "MadeUp", Order: 90, Prefix: "madeup_",
		ModelLabel: "model", FinishedLabel: "outcome",
		NotCompleted: []engine.Reason{{Value: "cancelled", Metric: engine.Aborted}},
		Families: []engine.Family{
			{Name: "madeup_finished_total", Type: model.MetricTypeCounter, Metric: engine.Completed, Finished: true},
			{Name: "madeup_running", Type: model.MetricTypeGauge, Metric: engine.Running},
			{Name: "madeup_waiting", Type: model.MetricTypeGauge, Metric: engine.Waiting},
			{Name: "madeup_ttft_seconds", Type: model.MetricTypeHistogram, Metric: engine.TTFT},
		},
	})
	engine.RegisterConnector(engine.Connector{
		Source: madeUpLink, Display: "MadeUpLink", Engine: madeUp, Order: 90,
		Families: []engine.Family{
			{Name: "madeup_link_bytes_total", Type: model.MetricTypeCounter, Metric: engine.KVBytes},
		},
	})
	t.Cleanup(func() { engine.Unregister(madeUp) })
}

// madeUpExposition is the made-up engine's /metrics el seconds after it
// started: counters grow at the true rates.
func madeUpExposition(el float64) string {
	return fmt.Sprintf(`# TYPE madeup_finished_total counter
madeup_finished_total{model="m",outcome="stop"} %g
madeup_finished_total{model="m",outcome="cancelled"} %g
# TYPE madeup_running gauge
madeup_running{model="m"} 7
# TYPE madeup_waiting gauge
madeup_waiting{model="m"} 2
# TYPE madeup_link_bytes_total counter
madeup_link_bytes_total{model="m"} %g
# TYPE madeup_ttft_seconds histogram
madeup_ttft_seconds_bucket{model="m",le="0.5"} 3
madeup_ttft_seconds_bucket{model="m",le="+Inf"} 4
madeup_ttft_seconds_sum{model="m"} 1.5
madeup_ttft_seconds_count{model="m"} 4
# TYPE madeup_unread_total counter
madeup_unread_total{model="m"} 1
`, madeUpRate*el, madeUpCancelled*el, madeUpRate*madeUpBytes*el)
}

// TestRegisterNewEngine takes an engine registered the way
// docs/adapters.md says through everything that names engines: the
// configuration, serve, gen and inspect. Nothing outside the registration
// knows its name.
func TestRegisterNewEngine(t *testing.T) {
	registerMadeUp(t)
	dir := t.TempDir()

	start := time.Now()
	engineSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, madeUpExposition(time.Since(start).Seconds()))
	}))
	defer engineSrv.Close()

	cfgPath := filepath.Join(dir, "ptdmon.yaml")
	cfgText := fmt.Sprintf("listen: 127.0.0.1:0\ninterval: 100ms\nwindow: 1s\nkv_source: madeuplink\nkv_bytes_per_request: %d\n"+
		"targets:\n  - {name: mu0, url: %q, role: prefill, engine: madeup}\n", int64(madeUpBytes), engineSrv.URL+"/metrics")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("config", func(t *testing.T) {
		f := func(text, wantErr string) {
			t.Helper()
			cfg, err := config.Parse([]byte(text), "ptdmon.yaml")
			if err == nil {
				cfg.SetDefaults()
				err = cfg.Validate()
			}
			if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
				t.Errorf("%q: %v, want %q", text, err, wantErr)
			}
		}
		f(cfgText, "")
		f(strings.Replace(cfgText, "engine: madeup", "engine: bogus", 1), `engine "bogus": want vllm, sglang, trtllm, madeup or auto`)
		f(strings.Replace(cfgText, "kv_source: madeuplink", "kv_source: bogus", 1), "sglang, dynamo, madeuplink or none")
	})

	t.Run("serve", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		old := serveContext
		serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
		defer func() { serveContext = old }()
		var stdout, stderr syncBuffer
		done := make(chan int, 1)
		go func() { done <- runServe([]string{"-config", cfgPath}, &stdout, &stderr) }()
		defer func() {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("serve exited %d: %s", code, stderr.String())
			}
		}()

		started := regexp.MustCompile(`serving on (http://\S+/)`)
		var base string
		var snap struct {
			Point struct {
				Prefill struct {
					Rate *float64 `json:"requests_per_second_window"`
				} `json:"prefill"`
				KV struct {
					Rate *float64 `json:"requests_per_second_window"`
				} `json:"kv"`
				Instances []struct {
					Engine string `json:"engine"`
				} `json:"instances"`
			} `json:"point"`
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			if time.Now().After(deadline) {
				t.Fatalf("no prefill and KV rate in /api/v1/snapshot; last %+v; stderr: %s", snap, stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
			if base == "" {
				m := started.FindStringSubmatch(stdout.String())
				if m == nil {
					continue
				}
				base = m[1]
			}
			// A full window of samples, so the windowed rate spans 1 s.
			if time.Since(start) < 2500*time.Millisecond {
				continue
			}
			res, err := http.Get(base + "api/v1/snapshot")
			if err != nil {
				t.Fatal(err)
			}
			err = json.NewDecoder(res.Body).Decode(&snap)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if snap.Point.Prefill.Rate != nil && snap.Point.KV.Rate != nil {
				break
			}
		}
		for name, got := range map[string]float64{"prefill": *snap.Point.Prefill.Rate, "kv": *snap.Point.KV.Rate} {
			// Cancelled requests are not completions: the truth is
			// madeUpRate, not madeUpRate+madeUpCancelled.
			if math.Abs(got-madeUpRate) > 0.05*madeUpRate {
				t.Errorf("%s req/s = %.2f, want %.0f ± 5%%", name, got, madeUpRate)
			}
		}
		if len(snap.Point.Instances) != 1 || snap.Point.Instances[0].Engine != string(madeUp) {
			t.Errorf("instances %+v, want one of engine madeup", snap.Point.Instances)
		}
	})

	t.Run("gen", func(t *testing.T) {
		for _, what := range []string{"prometheus", "rules", "grafana"} {
			out := filepath.Join(dir, "gen-"+what)
			if what != "grafana" {
				out += ".yml"
			}
			if code, _, errs := runCmd("gen", what, "-config", cfgPath, "-window", "5s", "-out", out); code != 0 {
				t.Fatalf("gen %s: exit %d: %s", what, code, errs)
			}
			if what != "rules" {
				continue
			}
			rules, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, fam := range []string{"madeup_finished_total", "madeup_link_bytes_total", "madeup_running"} {
				if !strings.Contains(string(rules), fam) {
					t.Errorf("the generated rules do not read %s", fam)
				}
			}
			if !strings.Contains(string(rules), `outcome!~"cancelled"`) && !strings.Contains(string(rules), `outcome!="cancelled"`) {
				t.Error("the generated rules do not leave the cancelled requests out of the completions")
			}
		}
	})

	t.Run("inspect", func(t *testing.T) {
		file := filepath.Join(dir, "madeup.txt")
		if err := os.WriteFile(file, []byte(madeUpExposition(10)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCmd("inspect", "-role", "prefill", file)
		for _, want := range []string{"engine     madeup\n", "prefix     madeup_ (6 families)\n", fmt.Sprintf("requests_completed                 %g\n", 10*madeUpRate)} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("inspect: exit %d, stderr %q, stdout lacks %q:\n%s", code, errs, want, out)
			}
		}
	})

	// The simulator: once internal/sim has a profile per engine, a profile
	// for madeup runs it in `ptdmon sim` and `ptdmon demo`; that part of the
	// test goes here.
}
