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
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
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
// configuration, serve, gen, inspect and the simulator. Nothing outside the registration
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
		f(strings.Replace(cfgText, "engine: madeup", "engine: bogus", 1), `engine "bogus": want vllm, ray-vllm, sglang, trtllm, nixl-telemetry, mooncake-te, dynamo-frontend, llm-d-epp, sglang-gateway, vllm-router, madeup or auto`)
		f(strings.Replace(cfgText, "kv_source: madeuplink", "kv_source: bogus", 1), "sglang, dynamo, nixl-telemetry, mooncake-te, madeuplink or none")
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
		testutil.Eventually(t, 15*time.Second, 50*time.Millisecond, func() (bool, string) {
			if base == "" {
				m := started.FindStringSubmatch(stdout.String())
				if m == nil {
					return false, "serve has not said where it listens; stderr: " + stderr.String()
				}
				base = m[1]
			}
			// A full window of samples, so the windowed rate spans 1 s.
			if time.Since(start) < 2500*time.Millisecond {
				return false, "less than a window of samples"
			}
			getJSON(t, base+"api/v1/snapshot", &snap)
			return snap.Point.Prefill.Rate != nil && snap.Point.KV.Rate != nil,
				fmt.Sprintf("no prefill and KV rate in /api/v1/snapshot; last %+v; stderr: %s", snap, stderr.String())
		})
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

	t.Run("simulator", func(t *testing.T) { simulateMadeUp(t, dir) })
}

// madeUpFormat prints a simulated instance as the made-up engine would:
// its engines' counters summed (the adapter has no group label), finish
// reasons under its own label, aborts spelled as it spells them.
type madeUpFormat struct{}

func (madeUpFormat) ContentType() string { return "text/plain; version=0.0.4; charset=utf-8" }

func (madeUpFormat) Render(dst []byte, v *sim.InstanceView) []byte {
	reasons := sim.FinishReasons()
	finished := make([]uint64, len(reasons))
	var running, waiting int
	var kvBytes float64
	for _, e := range v.Engines {
		for i := range reasons {
			finished[i] += e.Finished[i]
		}
		running, waiting = running+e.Running, waiting+e.Waiting
		kvBytes += float64(e.KV.BytesTransferred)
	}
	dst = append(dst, "# TYPE madeup_finished_total counter\n"...)
	for i, r := range reasons {
		if r == "abort" {
			r = "cancelled"
		}
		dst = fmt.Appendf(dst, "madeup_finished_total{model=%q,outcome=%q} %d\n", v.Model, r, finished[i])
	}
	dst = fmt.Appendf(dst, "# TYPE madeup_running gauge\nmadeup_running{model=%q} %d\n", v.Model, running)
	dst = fmt.Appendf(dst, "# TYPE madeup_waiting gauge\nmadeup_waiting{model=%q} %d\n", v.Model, waiting)
	return fmt.Appendf(dst, "# TYPE madeup_link_bytes_total counter\nmadeup_link_bytes_total{model=%q} %g\n", v.Model, kvBytes)
}

// simulateMadeUp gives the made-up engine a simulator profile, the one step
// docs/adapters.md adds for the simulator, and runs `ptdmon demo` on a
// scenario of it: each instance's windowed rate in /api/v1/snapshot must
// equal the simulator's truth over the same samples' times.
func simulateMadeUp(t *testing.T, dir string) {
	// Split legs, as vLLM's proxy sends them: each side counts its leg
	// in EngineStats.Finished.
	sim.RegisterProfile(sim.Profile{Engine: madeUp, Format: madeUpFormat{}, Connectors: []string{string(madeUpLink)}, SplitLegs: true})
	t.Cleanup(func() { sim.UnregisterProfile(madeUp) })

	scenario := filepath.Join(dir, "madeup-scenario.yaml")
	text := "model: made/up\ngroups:\n  - {name: mu, engine: madeup, rate: 12, prefill: {instances: 2, dp: 2}, decode: {instances: 2}}\n"
	if err := os.WriteFile(scenario, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runDemo([]string{"-scenario-file", scenario, "-listen", "127.0.0.1:0", "-interval", "200ms", "-window", "2s", "-duration", "12s"}, &stdout, &stderr)
	}()
	defer func() {
		if code := <-done; code != 0 {
			t.Errorf("demo exited %d: %s", code, stderr.String())
		}
	}()

	page := regexp.MustCompile(`open (http://\S+/)`)
	truthURL := regexp.MustCompile(`truth at (http://\S+);`)
	type instance struct {
		Target     string    `json:"target"`
		Role       string    `json:"role"`
		Engine     string    `json:"engine"`
		Rate       *float64  `json:"requests_per_second_window"`
		KVBytes    *float64  `json:"kv_bytes_per_second_window"`
		WindowFrom time.Time `json:"window_from"`
		WindowTo   time.Time `json:"window_to"`
	}
	var snap struct {
		Point struct {
			Instances []instance `json:"instances"`
		} `json:"point"`
	}
	describe := func(ins []instance) string {
		var b strings.Builder
		for _, in := range ins {
			fmt.Fprintf(&b, "%s %s: ", in.Target, in.Engine)
			if in.Rate != nil {
				fmt.Fprintf(&b, "%.2f req/s over %v; ", *in.Rate, in.WindowTo.Sub(in.WindowFrom))
			} else {
				b.WriteString("no rate; ")
			}
		}
		return b.String()
	}
	var base, truth string
	// The demo stops by itself after 12 s; the rates are ready after about 3.
	testutil.Eventually(t, 11*time.Second, 100*time.Millisecond, func() (bool, string) {
		if base == "" || truth == "" {
			if m := page.FindStringSubmatch(stdout.String()); m != nil {
				base = m[1]
			}
			if m := truthURL.FindStringSubmatch(stderr.String()); m != nil {
				truth = m[1]
			}
			return false, "demo has not printed its URLs; stderr: " + stderr.String()
		}
		getJSON(t, base+"api/v1/snapshot", &snap)
		ready := len(snap.Point.Instances) == 4
		for _, in := range snap.Point.Instances {
			// At least six completions in the window, so that the ±1 below
			// tells a right count from a wrong one.
			ready = ready && in.Rate != nil && in.WindowTo.Sub(in.WindowFrom) >= 1500*time.Millisecond && *in.Rate >= 4
		}
		return ready, "no windowed rates for 4 madeup instances in /api/v1/snapshot; last " + describe(snap.Point.Instances)
	})
	for _, in := range snap.Point.Instances {
		if in.Engine != string(madeUp) {
			t.Errorf("%s: engine %q, want madeup", in.Target, in.Engine)
		}
		counts := func(at time.Time) (done, kv int64) {
			var tr struct {
				Instances []struct {
					Name     string `json:"name"`
					Exported struct {
						Prefill int64 `json:"prefill_completed"`
						Decode  int64 `json:"decode_completed"`
						KVBytes int64 `json:"kv_bytes"`
					} `json:"exported"`
				} `json:"instances"`
			}
			getJSON(t, fmt.Sprintf("%s?at=%d", truth, at.UnixNano()), &tr)
			for _, it := range tr.Instances {
				if it.Name == in.Target {
					if in.Role == "prefill" {
						return it.Exported.Prefill, it.Exported.KVBytes
					}
					return it.Exported.Decode, it.Exported.KVBytes
				}
			}
			t.Fatalf("%s is not in the simulator's truth", in.Target)
			return 0, 0
		}
		d0, kv0 := counts(in.WindowFrom)
		d1, kv1 := counts(in.WindowTo)
		secs := in.WindowTo.Sub(in.WindowFrom).Seconds()
		// A sample's time is the midpoint of its HTTP exchange; the
		// simulator rendered it inside the exchange, at most half the scrape
		// timeout (4/5 of the 200 ms interval) away. What it completed that
		// close to an edge (a batch finishes at one instant) may fall on
		// either side.
		const near = 80 * time.Millisecond
		var edgeDone, edgeKV int64
		for _, at := range []time.Time{in.WindowFrom, in.WindowTo} {
			a, akv := counts(at.Add(-near))
			b, bkv := counts(at.Add(near))
			edgeDone, edgeKV = edgeDone+b-a, edgeKV+bkv-akv
		}
		if got := *in.Rate * secs; math.Abs(got-float64(d1-d0)) > float64(max(1, edgeDone)) {
			t.Errorf("%s: %.2f completions over the window, truth %d (%d within %v of its edges)", in.Target, got, d1-d0, edgeDone, near)
		}
		if in.Role == "prefill" && in.KVBytes != nil && kv1 > kv0 {
			if got, want := *in.KVBytes*secs, float64(kv1-kv0); math.Abs(got-want) > float64(max(sim.LlamaKVBytes, edgeKV)) {
				t.Errorf("%s: %.0f KV bytes over the window, truth %.0f", in.Target, got, want)
			}
		}
	}
}

// getJSON decodes url's JSON body into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
