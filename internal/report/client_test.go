package report

import (
	"fmt"
	stdhtml "html"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
	"github.com/ptdmon/ptdmon/internal/benchresult/benchgen"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// simBench runs a scenario with a load generator whose requests are the
// simulator's, plus two that failed before reaching it, and returns the
// run's input, the generator's run and the true decode completions.
func simBench(t *testing.T, dur time.Duration) (Input, benchgen.Run, int64) {
	t.Helper()
	sc, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	var done []sim.Completion
	res, err := simtest.RunWith(sc, 1, dur, simtest.Options{Model: func(m *sim.Model) {
		m.OnComplete(func(c sim.Completion) { done = append(done, c) })
	}})
	if err != nil {
		t.Fatal(err)
	}
	run := benchgen.Run{Mono: 81234.5, SLOTTFT: 2}
	for _, c := range done {
		run.Requests = append(run.Requests, benchgen.Request{ID: fmt.Sprintf("sim-%s-%d", c.Group, c.ID), Start: c.Arrival,
			TTFT: c.First.Sub(c.Arrival).Seconds(), E2E: c.End.Sub(c.Arrival).Seconds(),
			OutputTokens: c.OutputTokens, InputTokens: c.InputTokens})
	}
	for i, at := range []time.Duration{20 * time.Second, 40 * time.Second} {
		run.Requests = append(run.Requests, benchgen.Request{ID: fmt.Sprint("failed-", i), Start: simtest.Epoch.Add(at),
			E2E: 0.01, InputTokens: sc.InputTokens, Err: "ClientConnectorError"})
	}
	var targets []Target
	for _, in := range res.Instances {
		targets = append(targets, Target{Name: in.Name, Role: in.Role, Engine: in.Engine, Model: sc.Model})
	}
	in := Input{Meta: Meta{Targets: targets, BRequest: kvsize.Request{Bytes: sc.KVBytesPerRequest, Basis: kvsize.BasisSimulator},
		Version: "test", Interval: time.Second, Window: 5 * time.Second}, Points: res.Points}
	return in, run, res.Model.TruthAt(dur).Totals.DecodeCompleted
}

// TestClientViewEqualsTheGenerator is the round trip of every format: a
// load generator against the simulator writes, for the same requests, each
// tool's result file; each is read back into the report, whose client
// figures must be the generator's own, placed as its clock allows, with
// completions matching the simulator's truth and the decode counters.
func TestClientViewEqualsTheGenerator(t *testing.T) {
	const dur = 90 * time.Second
	in, run, trueDone := simBench(t, dur)
	fig := run.Figures()
	if int64(fig.Completed) != trueDone {
		t.Fatalf("the generator completed %d requests, the simulator's decode engines %d", fig.Completed, trueDone)
	}
	// The command started before the first request (a tokenizer loads)
	// and ended after the last one (the file is written).
	cmd := benchresult.Span{Start: fig.Start.Add(-3 * time.Second), End: fig.End.Add(400 * time.Millisecond)}
	in.Meta.Annotations = []Annotation{{Time: cmd.Start, Text: "start: loadgen"}, {Time: cmd.End, Text: "end: loadgen (exit status 0)"}}

	type want struct {
		wall                 bool
		failed, goodput, p90 bool // present in the format
	}
	f := func(name string, body []byte, w want) {
		t.Run(name, func(t *testing.T) {
			res, err := benchresult.Read(name, body)
			if err != nil {
				t.Fatal(err)
			}
			in := in
			in.Bench = &res
			rep, err := Build(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// What a user reads back: the report's JSON.
			js, err := rep.JSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ReadJSON(js)
			if err != nil {
				t.Fatal(err)
			}
			c := back.Client
			if c == nil {
				t.Fatal("no client view in the report")
			}
			eq := func(what string, got *float64, want float64, present bool) {
				t.Helper()
				switch {
				case !present && got != nil:
					t.Errorf("%s = %g, want absent (the format has no such figure)", what, *got)
				case present && got == nil:
					t.Errorf("%s absent (%v), want %g", what, c.Absent, want)
				case present && math.Abs(*got-want) > 1e-9*math.Max(1, math.Abs(want)):
					t.Errorf("%s = %.12g, the generator computed %.12g", what, *got, want)
				}
			}
			if c.Completed == nil || *c.Completed != fig.Completed {
				t.Errorf("completed = %v, the generator's %d", c.Completed, fig.Completed)
			}
			if w.failed {
				if c.Failed == nil || *c.Failed != fig.Failed {
					t.Errorf("failed = %v, the generator's %d", c.Failed, fig.Failed)
				}
			}
			eq("duration", c.Duration, fig.Duration, true)
			eq("request rate", c.RequestRate, fig.RequestRate, true)
			eq("output tokens/s", c.OutputTPS, fig.OutputTPS, true)
			eq("goodput", c.Goodput, fig.Goodput, w.goodput)
			for _, d := range []struct {
				name string
				got  benchresult.Dist
				want benchgen.Stat
			}{{"TTFT", c.TTFT, fig.TTFT}, {"ITL", c.ITL, fig.ITL}, {"E2E", c.E2E, fig.E2E}} {
				eq(d.name+" mean", d.got.Mean, d.want.Mean, true)
				eq(d.name+" p50", d.got.P50, d.want.P50, true)
				eq(d.name+" p99", d.got.P99, d.want.P99, true)
				eq(d.name+" p90", d.got.P90, d.want.P90, w.p90)
			}
			p := c.Placement
			if w.wall {
				if p.Method != benchresult.PlacedWall || p.From.Sub(fig.Start).Abs() > time.Microsecond || p.Residual == nil || *p.Residual != 0 {
					t.Errorf("placement %+v, want the file's own times %s to %s, residual 0", p, fig.Start, fig.End)
				}
			} else {
				slack := cmd.End.Sub(cmd.Start).Seconds() - fig.Duration
				if p.Method != benchresult.PlacedCommandEnd || !p.To.Equal(cmd.End) || p.Residual == nil || math.Abs(*p.Residual-slack) > 1e-6 {
					t.Errorf("placement %+v, want anchored to the command's end %s with residual %g", p, cmd.End, slack)
				}
			}
			if len(c.Checks) == 0 || c.Checks[0].What != "completions" || c.Checks[0].Server == nil {
				t.Fatalf("checks %+v: want completions compared", c.Checks)
			}
			ck := c.Checks[0]
			if ck.Beyond {
				t.Errorf("client completions %g vs decode's %g (tolerance %g): called beyond noise", *ck.Client, *ck.Server, *ck.Tolerance)
			}
			t.Logf("%s: completions client %g, decode counters %g (tolerance %.3g); placement %s, residual %.3g s",
				name, *ck.Client, *ck.Server, *ck.Tolerance, p.Method, *p.Residual)
		})
	}
	f("vllm.json", run.VLLM(), want{failed: true, goodput: true, p90: true})
	f("sglang.jsonl", run.SGLang(), want{failed: true})
	f("profile_export_aiperf.json", run.AIPerfProfile(), want{failed: true, goodput: true, p90: true})
	f("profile_export.jsonl", run.AIPerfRecords(), want{wall: true, failed: true, p90: true})
	f("benchmarks.json", run.GuideLLM(), want{wall: true, failed: true, p90: true})
	f("benchmark_report.json", run.LLMD(), want{wall: true, failed: true, p90: true})
	f("summary_lifecycle_metrics.json", run.InferencePerf(), want{failed: true, p90: true})
}

// TestClientCompletionsDisagree: a result that claims more completions than
// the decode engines made is called beyond noise, with both numbers.
func TestClientCompletionsDisagree(t *testing.T) {
	in, run, _ := simBench(t, 60*time.Second)
	fig := run.Figures()
	// Drop the even requests from the server's view: the client says it
	// completed twice what decode did.
	extra := run
	extra.Requests = append([]benchgen.Request(nil), run.Requests...)
	for _, q := range run.Requests {
		if q.Err == "" {
			q.ID += "-dup"
			extra.Requests = append(extra.Requests, q)
		}
	}
	res, err := benchresult.Read("profile_export.jsonl", extra.AIPerfRecords())
	if err != nil {
		t.Fatal(err)
	}
	in.Bench = &res
	rep, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ck := rep.Client.Checks[0]
	if !ck.Beyond || ck.Client == nil || ck.Server == nil || *ck.Client != float64(2*fig.Completed) {
		t.Fatalf("check %+v: want client %d against the decode counters, beyond noise", ck, 2*fig.Completed)
	}
	md := string(rep.Markdown())
	for _, s := range []string{"The load generator's view", "**beyond noise**", fmt.Sprint(2 * fig.Completed)} {
		if !strings.Contains(md, s) {
			t.Errorf("Markdown lacks %q", s)
		}
	}
	html, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `class="beyond"`) {
		t.Error("HTML does not mark the disagreement")
	}
	// The page and the Markdown show the same rows.
	var cells []string
	for _, row := range rep.Client.rows() {
		cells = append(cells, row[0], row[1])
	}
	for _, ck := range rep.Client.Checks {
		row := ck.row()
		cells = append(cells, row[:]...)
	}
	text := stdhtml.UnescapeString(string(html))
	for _, c := range cells {
		if !strings.Contains(md, c) {
			t.Errorf("Markdown lacks %q", c)
		}
		if c = strings.Trim(c, "*"); !strings.Contains(text, c) {
			t.Errorf("HTML lacks %q", c)
		}
	}
}

type (
	benchgenRun     = benchgen.Run
	benchgenFigures = benchgen.Figures
)
