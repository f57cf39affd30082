package e2e

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/report"
	"github.com/ptdmon/ptdmon/internal/tsdbsource"
)

// TestReportFromPrometheus: the report of a past range read back from a
// real Prometheus (which scraped the simulator with the generated
// configuration), as `ptdmon report -source prometheus=URL -from -to`
// builds it: a steady span is found, each stage's mean rate equals the
// simulator's true completions over that span, and the verdict is the
// scenario's.
func TestReportFromPrometheus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the 50 s report run")
	}
	promBin := prometheusBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	cl := startSim(t, ctx, scenario(t), 3, simSpeed)
	dir := t.TempDir()
	in := gen.FromConfig(simConfig(cl), cl.BytesPerRequest())
	in.PtdmonAddr = "127.0.0.1:" + freePort(t)
	promYML := writePromYML(t, dir, in)
	prom := startPrometheus(t, ctx, promBin, dir, promYML)
	const runFor = 50 * time.Second
	select {
	case <-time.After(time.Until(cl.Started().Add(runFor))):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	from, to := cl.Started().Add(2*time.Second), cl.Started().Add(runFor-3*time.Second)
	breq := kvsize.Request{Bytes: cl.BytesPerRequest(), Basis: kvsize.BasisFlag}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: window, History: 100, KVRequest: breq, Logger: quietLog()})
	rng, err := tsdbsource.ReadRange(ctx, l, tsdbsource.Options{URL: prom, Interval: time.Second, Window: window, Logger: quietLog()}, from, to)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Build(report.Input{Points: rng.Points, Meta: report.Meta{BRequest: breq, Interval: time.Second, Window: window}}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rng.Targets) != len(cl.Targets()) {
		t.Errorf("%d targets read back, the simulator runs %d", len(rng.Targets), len(cl.Targets()))
	}
	// The range is 45 s and the finder's centred 30 s smoothing trims
	// 15 s at each end: at most 15 s can be steady. A point or two at its
	// edges may leave the band on a loaded machine.
	if !r.Steady.Found || r.Steady.Seconds < 10 {
		t.Fatalf("steady span %+v", r.Steady)
	}
	// The truth over the span: completions between the sample before its
	// first point and its last point. Prometheus' sample times are its
	// scrapes', up to a scrape interval off the points', hence the
	// tolerance of 1 s of completions over the span.
	a, b := cl.TruthAt(r.Steady.From.Add(-time.Second)), cl.TruthAt(r.Steady.To)
	secs := b.At.Sub(a.At).Seconds()
	for _, c := range []struct {
		name string
		got  *float64
		want float64
	}{
		{"prefill", r.Stages.Prefill.RequestsPerSecond, float64(b.Totals.PrefillCompleted-a.Totals.PrefillCompleted) / secs},
		{"kv", r.Stages.KV.RequestsPerSecond, float64(b.Totals.KVBytes-a.Totals.KVBytes) / float64(b.BytesPerRequest) / secs},
		{"decode", r.Stages.Decode.RequestsPerSecond, float64(b.Totals.DecodeCompleted-a.Totals.DecodeCompleted) / secs},
	} {
		if c.got == nil {
			t.Errorf("%s: no rate", c.name)
			continue
		}
		t.Logf("%-7s report %.3f req/s, truth %.3f over %s to %s", c.name, *c.got, c.want, r.Steady.From.Format(time.TimeOnly), r.Steady.To.Format(time.TimeOnly))
		if math.Abs(*c.got-c.want) > c.want/secs+tolerance*c.want {
			t.Errorf("%s: report %.3f req/s, truth %.3f", c.name, *c.got, c.want)
		}
	}
	if r.Verdict.Class != "balanced" {
		t.Errorf("verdict %s, the scenario is balanced", r.Verdict.Class)
	}
}
