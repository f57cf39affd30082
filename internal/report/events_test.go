package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// A run killed and resumed has a gap: the report lists it with why, the
// restart, the change of settings the resume brought, a target down and a
// change of targets; and the steady span, flat on both sides of the gap,
// does not cross it.
func TestReportSaysWhatHappened(t *testing.T) {
	all := synthetic(300, func(int) float64 { return 10 })
	// Points 140..150 are missing: ptdmon was down 12 s.
	pts := append(append([]ledger.Point(nil), all[:140]...), all[151:]...)
	for i := range pts {
		up := !(pts[i].Time.After(all[200].Time) && pts[i].Time.Before(all[215].Time))
		pts[i].Instances = []ledger.InstancePoint{{Target: "p0", Up: true}, {Target: "d0", Up: up}}
	}
	t0 := all[0].Time
	meta := Meta{Interval: time.Second, Window: 5 * time.Second,
		Processes: []Process{{Start: t0.Add(-time.Second), ConfigHash: "aaaaaaaaaaaaaaaa"}, {Start: all[150].Time, ConfigHash: "bbbbbbbbbbbbbbbb"}},
		TargetSets: []TargetSet{{From: t0, Targets: []string{"p0", "d0"}}, {From: all[150].Time, Targets: []string{"p0", "d0"}},
			{From: all[250].Time, Targets: []string{"p0", "d0", "d1"}}},
	}
	r, err := Build(Input{Meta: meta, Points: pts}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]Event{}
	for _, e := range r.Events {
		kinds[e.Kind] = append(kinds[e.Kind], e)
	}
	f := func(kind string, n int, text string, seconds float64) {
		t.Helper()
		es := kinds[kind]
		if len(es) != n {
			t.Fatalf("%d %s events, want %d: %+v", len(es), kind, n, r.Events)
		}
		if n > 0 && (!strings.Contains(es[0].Text, text) || es[0].Seconds != seconds) {
			t.Errorf("%s: %q, %gs; want %q, %gs", kind, es[0].Text, es[0].Seconds, text, seconds)
		}
	}
	f(EventGap, 1, "ptdmon was not running (killed, restarted at", 12)
	f(EventRestart, 1, "was killed", 0)
	f(EventConfig, 1, "aaaaaaaaaaaa → bbbbbbbbbbbb", 0)
	f(EventDown, 1, "target d0 down", 13)
	f(EventTargets, 1, "added d1", 0)
	gap := kinds[EventGap][0]
	if r.Steady.Gaps != 1 {
		t.Errorf("steady says %d gaps, want 1", r.Steady.Gaps)
	}
	if r.Steady.From.Before(gap.To) && r.Steady.To.After(gap.From) {
		t.Errorf("steady span %v to %v crosses the gap %v to %v", r.Steady.From, r.Steady.To, gap.From, gap.To)
	}
	for _, out := range [][]byte{r.Markdown(), must(r.HTML())} {
		for _, e := range r.Events {
			if !strings.Contains(string(out), e.Text[:20]) {
				t.Errorf("a rendering leaves out the event %q", e.Text)
			}
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// The report opens with the load offered against the load served: on the
// prefill-bound simulator the offered rate is the scenario's arrivals
// (its groups' Poisson rates) and exceeds what decode served.
func TestReportOffersAndServes(t *testing.T) {
	sc, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	var arrivals float64
	for _, g := range sc.Groups {
		arrivals += g.Rate
	}
	r := simReport(t, "prefill-bound", 11, nil)
	l := r.Load
	if l.OfferedRequestsPerSecond == nil || l.ServedRequestsPerSecond == nil {
		t.Fatalf("load %+v", l)
	}
	if o := *l.OfferedRequestsPerSecond; o < 0.9*arrivals || o > 1.1*arrivals {
		t.Errorf("offered %.2f req/s, the scenario's arrivals %.2f", o, arrivals)
	}
	if *l.ServedRequestsPerSecond >= *l.OfferedRequestsPerSecond {
		t.Errorf("served %.2f ≥ offered %.2f on a prefill-bound run", *l.ServedRequestsPerSecond, *l.OfferedRequestsPerSecond)
	}
	md := string(r.Markdown())
	if i := strings.Index(md, "offered"); i < 0 || i > strings.Index(md, "## What ran") {
		t.Error("the Markdown does not open with the offered load")
	}
}

// A run with SGLang prefill instances says why their prefill curve lies on
// the KV curve; one without says nothing of it.
func TestReportSaysWhySGLangPrefillIsKV(t *testing.T) {
	f := func(targets []Target, want bool) {
		t.Helper()
		r, err := Build(Input{Meta: Meta{Targets: targets, Interval: time.Second}, Points: synthetic(60, func(int) float64 { return 5 })}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		md, page := string(r.Markdown()), string(must(r.HTML()))
		for _, out := range []string{md, page} {
			if strings.Contains(out, "once its KV cache is sent") != want {
				t.Errorf("targets %v: the note is there: %v, want %v", targets, !want, want)
			}
		}
	}
	f([]Target{{Name: "p0", Role: "prefill", Engine: "sglang"}, {Name: "d0", Role: "decode", Engine: "sglang"}}, true)
	f([]Target{{Name: "p0", Role: "prefill", Engine: "vllm"}, {Name: "d0", Role: "decode", Engine: "sglang"}}, false)
}
