package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// Timeline of the TSDB-source runs, in wall-clock time since the simulator
// started (it runs at simSpeed). One prefill and one decode instance
// restart once the TSDB has surely scraped them (a loaded machine can take
// 10 s to start one), so the compared windows hold their counter resets.
const (
	restartP    = 14 * time.Second
	restartD    = 17 * time.Second
	restartDown = 2 * time.Second
	tsdbRunFor  = 42 * time.Second
	compareFrom = 14 * time.Second
)

// restartScenario is the e2e cluster (every byte source, SGLang DP 2) with
// a vLLM prefill and an SGLang decode instance restarting.
func restartScenario(t *testing.T) sim.Scenario {
	sc := scenario(t)
	simTime := func(d time.Duration) time.Duration { return d * simSpeed }
	sc.Restarts = []sim.Restart{
		{Instance: "vllm-p0", At: simTime(restartP), Down: simTime(restartDown)},
		{Instance: "sglang-d0", At: simTime(restartD), Down: simTime(restartDown)},
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	return sc
}

// tsdbRun is one run: the simulator, ptdmon scraping it directly, a TSDB
// scraping it with the generated configuration, and ptdmon reading the TSDB.
type tsdbRun struct {
	cl              *sim.Cluster
	direct, sourced string
	started         time.Time
	dir             string
	in              gen.Input
}

// startTSDBRun starts everything but the TSDB, which startTSDB starts
// from the generated prometheus.yml and returns the query API's URL of.
func startTSDBRun(t *testing.T, ctx context.Context, startTSDB func(dir, promYML string) string) *tsdbRun {
	t.Helper()
	cl := startSim(t, ctx, restartScenario(t), 11, simSpeed)
	r := &tsdbRun{cl: cl, started: cl.Started(), dir: t.TempDir()}
	cfg := simConfig(cl)
	r.direct = runPtdmon(t, ctx, cfg, cl.BytesPerRequest())

	r.in = gen.FromConfig(cfg, cl.BytesPerRequest())
	r.in.PtdmonAddr = r.direct[len("http://"):]
	promYML := writePromYML(t, r.dir, r.in)
	base := startTSDB(r.dir, promYML)
	r.sourced = runPtdmon(t, ctx, &config.Config{
		Window: config.Duration{Duration: window},
		Source: config.SourcePrometheus + "=" + base,
	}, cl.BytesPerRequest())
	return r
}

// compare polls both ptdmons once a second until the run ends, then checks
// that their windowed stage rates, averaged over the complete points of the
// same span, agree within 2%, and that the TSDB path saw the restarts.
func (r *tsdbRun) compare(t *testing.T) {
	t.Helper()
	var direct, sourced []fleetPoint
	var last fleetPoint
	for time.Since(r.started) < tsdbRunFor {
		if p, ok := getPoint(t, r.direct); ok {
			direct = append(direct, p)
		}
		p, ok := getPoint(t, r.sourced)
		if ok {
			sourced = append(sourced, p)
		}
		last = p
		time.Sleep(time.Second)
	}
	from, to := r.started.Add(compareFrom), r.started.Add(tsdbRunFor-3*time.Second)
	d, nd := meanBetween(direct, from, to)
	s, ns := meanBetween(sourced, from, to)
	if nd < 10 || ns < 10 {
		t.Fatalf("complete points in [%s, %s]: direct %d, TSDB %d; want 10 or more each", from.Format(time.TimeOnly), to.Format(time.TimeOnly), nd, ns)
	}
	for _, stage := range stages {
		diff := rel(s.get(stage), d.get(stage))
		t.Logf("%-7s TSDB-sourced %8.3f req/s  direct %8.3f  (%+.2f%%; %d and %d points)", stage, s.get(stage), d.get(stage), 100*diff, ns, nd)
		if math.Abs(diff) > tolerance {
			t.Errorf("%s: TSDB-sourced %.3f req/s, direct %.3f: beyond %.0f%%", stage, s.get(stage), d.get(stage), 100*tolerance)
		}
	}
	// The restarts, as the TSDB recorded them: a failed scrape (up == 0)
	// and a counter reset on each restarted instance.
	for _, name := range []string{"vllm-p0", "sglang-d0"} {
		found := false
		for _, tg := range last.Targets {
			if tg.Name != name {
				continue
			}
			found = true
			if tg.Failures["down"] == 0 || tg.CounterResets == 0 {
				t.Errorf("%s through the TSDB: failures %v, counter resets %d; want a down scrape and a reset", name, tg.Failures, tg.CounterResets)
			}
		}
		if !found {
			t.Errorf("%s not discovered from the TSDB's labels", name)
		}
	}
	if len(last.Targets) != len(r.cl.Targets()) {
		t.Errorf("TSDB path discovered %d targets, the simulator runs %d", len(last.Targets), len(r.cl.Targets()))
	}
}

// TestTSDBSourcePrometheus: ptdmon reading a real Prometheus 2.42 (which
// scrapes the simulator with the generated configuration) shows the same
// stage rates as ptdmon scraping the simulator itself, through restarts.
func TestTSDBSourcePrometheus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the 42 s TSDB run")
	}
	promBin := prometheusBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	r := startTSDBRun(t, ctx, func(dir, promYML string) string {
		return startPrometheus(t, ctx, promBin, dir, promYML)
	})
	r.compare(t)
}

// TestTSDBSourceVictoriaMetrics: the same with VictoriaMetrics single-node
// scraping with the same generated file (-promscrape.config), and the
// generated rules evaluated by vmalert against it: its recorded stage rates
// agree with the simulator's truth.
func TestTSDBSourceVictoriaMetrics(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the 42 s TSDB run")
	}
	vmBin := needBin(t, "victoria-metrics", "victoria-metrics")
	vmalertBin := needBin(t, "vmalert", "victoria-metrics")
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	var vmURL string
	r := startTSDBRun(t, ctx, func(dir, promYML string) string {
		addr := "127.0.0.1:" + freePort(t)
		startProc(t, ctx, vmBin, "-storageDataPath="+filepath.Join(dir, "vm"), "-httpListenAddr="+addr,
			"-promscrape.config="+promYML,
			// The generated file is a whole prometheus.yml (evaluation_interval, rule_files).
			"-promscrape.config.strictParse=false",
			// vmalert's 1 s rules must see the last second, not 30 s ago.
			"-search.latencyOffset=1s",
			"-loggerLevel=ERROR")
		vmURL = "http://" + addr
		waitReady(t, vmURL+"/health")
		return vmURL
	})
	rules, err := gen.Rules(r.in).YAML()
	if err != nil {
		t.Fatal(err)
	}
	rulesPath := filepath.Join(r.dir, "rules.yml")
	if err := os.WriteFile(rulesPath, rules, 0o644); err != nil {
		t.Fatal(err)
	}
	startProc(t, ctx, vmalertBin, "-rule="+rulesPath, "-datasource.url="+vmURL, "-remoteWrite.url="+vmURL,
		"-remoteWrite.flushInterval=500ms", "-evaluationInterval=1s",
		"-notifier.url=http://127.0.0.1:"+freePort(t), // alerts are checked with Alertmanager elsewhere
		"-httpListenAddr=127.0.0.1:"+freePort(t), "-loggerLevel=ERROR")

	r.compare(t)

	// vmalert's recordings of the engines path, over the last windows
	// (after the restarts), against the simulator's truth. Rules of a group
	// read the recordings of the rules before them, which vmalert writes
	// back through VictoriaMetrics: an evaluation may miss them, so a few
	// samples may be missing, but those recorded must be right.
	n := gen.RecordNames(strconvDuration(window))
	end := time.Now().Add(-2 * time.Second)
	// A recorded stage rate at t covers the scrapes up to t - lag: the
	// engines path reads counters one scrape interval late
	// (docs/prometheus.md), and vmalert, querying with
	// -search.latencyOffset=1s, reads each of the two recordings the stage
	// rule rests on (per process, per target) as of one second before. On a
	// loaded machine an evaluation starts late by up to a second more, so
	// each sample is held to the truth over lags from 2 s to 5 s: the truth
	// the sample is compared with is the nearest value in that band.
	const minLag, maxLag = 2 * time.Second, 5 * time.Second
	span := 10 * time.Second
	for _, stage := range stages {
		sel := fmt.Sprintf(`%s{path="engines",stage=%q}[%ds]`, n.Stage[1], stage, int(span/time.Second))
		series := queryMatrix(t, vmURL, sel, end)
		if len(series) != 1 || len(series[0]) < 3 {
			t.Errorf("vmalert %s: %d series recorded in the last %s, want one with 3 samples or more: %v", stage, len(series), span, series)
			continue
		}
		var rec, truth float64
		for _, s := range series[0] {
			rec += s.v
			truth += nearestTruth(r.cl, s.t, stage, s.v, minLag, maxLag)
		}
		k := float64(len(series[0]))
		rec, truth = rec/k, truth/k
		t.Logf("vmalert %-7s recorded %8.3f req/s  truth %8.3f (%+.2f%%, %d samples)", stage, rec, truth, 100*rel(rec, truth), len(series[0]))
		if math.Abs(rel(rec, truth)) > tolerance {
			t.Errorf("vmalert %s: recorded %.3f, truth %.3f: beyond %.0f%%", stage, rec, truth, 100*tolerance)
		}
	}
}

// nearestTruth is the true windowed rate at t - lag, for the lag in
// [minLag, maxLag] (in 250 ms steps) whose truth is closest to got.
func nearestTruth(cl *sim.Cluster, t time.Time, stage string, got float64, minLag, maxLag time.Duration) float64 {
	return nearest(func(at time.Time) float64 { return trueRate(cl, at, stage) }, t, got, minLag, maxLag)
}

// nearest is truth at t - lag, for the lag in [minLag, maxLag] (in 250 ms
// steps) whose value is closest to got: a recorded sample rests on
// scrapes up to a few seconds before its own time.
func nearest(truth func(time.Time) float64, t time.Time, got float64, minLag, maxLag time.Duration) float64 {
	best := math.NaN()
	for lag := minLag; lag <= maxLag; lag += 250 * time.Millisecond {
		v := truth(t.Add(-lag))
		if math.IsNaN(best) || math.Abs(v-got) < math.Abs(best-got) {
			best = v
		}
	}
	return best
}
