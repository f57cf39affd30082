package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/slo"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// Comparison puts two runs side by side (docs/report.md#comparing-two-rounds).
type Comparison struct {
	Runs    [2]RunSummary `json:"runs"`
	Stages  StageDiffs    `json:"stages"`
	Verdict VerdictDiff   `json:"verdict"`
	// KV is the KV link's bytes/s over each run's steady span.
	KV  KVDiff    `json:"kv"`
	SLO []SLODiff `json:"slo,omitempty"`
	// Pools are the pools both runs served, compared as the deployment
	// is; PoolsOnlyInA and PoolsOnlyInB name the others.
	Pools        []PoolDiff `json:"pools,omitempty"`
	PoolsOnlyInA []string   `json:"pools_only_in_a,omitempty"`
	PoolsOnlyInB []string   `json:"pools_only_in_b,omitempty"`
	// Client is the two runs' load generators' views (docs/bench.md).
	Client *ClientDiff `json:"client,omitempty"`
}

// RunSummary names a run in a comparison.
type RunSummary struct {
	Label      string    `json:"label"`
	From       time.Time `json:"from"` // RFC 3339 in JSON, as every time of a report
	To         time.Time `json:"to"`
	ConfigHash string    `json:"config_hash,omitempty"`
	Steady     Steady    `json:"steady"`
}

// StageDiff is one stage in both runs.
type StageDiff struct {
	// RequestsPerSecond and CI95 are [A, B]; Diff is B − A and Relative
	// (B − A) ÷ A.
	RequestsPerSecond [2]*float64    `json:"requests_per_second"`
	CI95              [2]*[2]float64 `json:"ci95"`
	Capacity          [2]*float64    `json:"capacity_requests_per_second"`
	Diff              *float64       `json:"difference"`
	Relative          *float64       `json:"relative_difference"`
	// Welch is the test on the two runs' batch means; absent when either
	// run has too few batches, with the reason.
	Welch       *Welch `json:"welch"`
	Significant bool   `json:"significant"`
	Absent      string `json:"absent,omitempty"`
}

// KVDiff is the KV bytes/s of both runs, [A, B], and B − A relative to A.
type KVDiff struct {
	BytesPerSecond [2]*float64    `json:"bytes_per_second"`
	CI95           [2]*[2]float64 `json:"bytes_per_second_ci95"`
	Relative       *float64       `json:"relative_difference"`
}

func kvDiff(a, b KV) KVDiff {
	d := KVDiff{BytesPerSecond: [2]*float64{a.BytesPerSecond, b.BytesPerSecond}, CI95: [2]*[2]float64{a.BytesCI95, b.BytesCI95}}
	if a.BytesPerSecond != nil && b.BytesPerSecond != nil && *a.BytesPerSecond != 0 {
		d.Relative = ptr((*b.BytesPerSecond - *a.BytesPerSecond) / *a.BytesPerSecond)
	}
	return d
}

// kvCell is one run's KV bytes/s with its interval, as the tables show it.
func kvCell(v *float64, c *[2]float64) string {
	s := bytesRate(v)
	if c != nil {
		s += " [" + bytesRate(&c[0]) + ", " + bytesRate(&c[1]) + "]"
	}
	return s
}

// VerdictDiff is the modal verdict of each run.
type VerdictDiff struct {
	A     diagnose.Class `json:"a"`
	B     diagnose.Class `json:"b"`
	Moved bool           `json:"moved"`
	Text  string         `json:"text"`
}

// SLODiff is one SLO's attainment by the whole request in both runs:
// Fraction where measured, Bound where only bounded (a report without the
// whole request's attainment has neither).
type SLODiff struct {
	Name     string        `json:"slo"`
	Fraction [2]*float64   `json:"fraction"`
	Bound    [2]*slo.Bound `json:"bound,omitzero"`
}

// SameRun says why a and b are one run, not two rounds to compare, or "":
// one recording's id, or (reports without one) the same span with the same
// points and means. A run compared with itself differs by nothing, which
// says nothing.
func SameRun(a, b *Report) string {
	if a.Run.RunID != "" && a.Run.RunID == b.Run.RunID {
		return "both are the run " + a.Run.RunID
	}
	if a.Run.RunID == "" && b.Run.RunID == "" && a.Run.From.Equal(b.Run.From) && a.Run.To.Equal(b.Run.To) &&
		a.Run.Points == b.Run.Points && a.Run.ConfigHash == b.Run.ConfigHash && sameMean(a.Stages.Prefill, b.Stages.Prefill) &&
		sameMean(a.Stages.Decode, b.Stages.Decode) {
		return fmt.Sprintf("both are the run from %s to %s", stamp(a.Run.From), stamp(a.Run.To))
	}
	return ""
}

func sameMean(a, b Stage) bool {
	if a.RequestsPerSecond == nil || b.RequestsPerSecond == nil {
		return a.RequestsPerSecond == b.RequestsPerSecond
	}
	return *a.RequestsPerSecond == *b.RequestsPerSecond
}

// Compare compares run a with run b (b is the later round).
func Compare(a, b *Report, labelA, labelB string) Comparison {
	var c Comparison
	c.Runs = [2]RunSummary{summary(a, labelA), summary(b, labelB)}
	c.Stages = stageDiffs(a.Stages, b.Stages)
	c.Verdict = verdictDiff(a.Verdict, b.Verdict)
	c.KV = kvDiff(a.KV, b.KV)
	c.SLO = sloDiff(a, b)
	c.Pools, c.PoolsOnlyInA, c.PoolsOnlyInB = poolDiffs(a, b)
	c.Client = clientDiff(a, b)
	return c
}

// verdictDiff is the modal verdicts a and b side by side.
func verdictDiff(a, b Modal) VerdictDiff {
	d := VerdictDiff{A: a.Class, B: b.Class, Moved: a.Class != b.Class}
	if d.Moved {
		d.Text = fmt.Sprintf("%s → %s", a.Headline, b.Headline)
	} else {
		d.Text = "both " + a.Headline
	}
	return d
}

func summary(r *Report, label string) RunSummary {
	return RunSummary{Label: label, From: r.Run.From, To: r.Run.To, ConfigHash: r.Run.ConfigHash, Steady: r.Steady}
}

func stageDiff(a, b Stage) StageDiff {
	d := StageDiff{RequestsPerSecond: [2]*float64{a.RequestsPerSecond, b.RequestsPerSecond},
		CI95: [2]*[2]float64{a.CI95, b.CI95}, Capacity: [2]*float64{a.Capacity, b.Capacity}}
	if a.RequestsPerSecond == nil || b.RequestsPerSecond == nil {
		d.Absent = "the stage has no rate in one of the runs"
		return d
	}
	d.Diff = ptr(*b.RequestsPerSecond - *a.RequestsPerSecond)
	if *a.RequestsPerSecond != 0 {
		d.Relative = ptr(*d.Diff / *a.RequestsPerSecond)
	}
	w, ok := welch(a.Batches, b.Batches)
	if !ok {
		d.Absent = "too few batch means in one of the runs for a test"
		return d
	}
	d.Welch, d.Significant = &w, w.Significant
	return d
}

func sloDiff(a, b *Report) []SLODiff {
	metrics := func(r *Report) map[string]slo.Metric {
		out := map[string]slo.Metric{}
		if r.SLO == nil || r.SLO.Request == nil {
			return out
		}
		for _, m := range r.SLO.Request.Metrics {
			out[m.Name] = m
		}
		return out
	}
	ma, mb := metrics(a), metrics(b)
	var out []SLODiff
	for _, name := range []string{"ttft", "itl", "e2e"} {
		d := SLODiff{Name: name}
		for i, m := range []slo.Metric{ma[name], mb[name]} {
			switch {
			case m.Within != nil:
				d.Fraction[i] = ptr(m.Within.Fraction)
			case m.Bound != nil:
				d.Bound[i] = m.Bound
			}
		}
		if d.Fraction != [2]*float64{} || d.Bound != [2]*slo.Bound{} {
			out = append(out, d)
		}
	}
	return out
}

// Cell is one run's attainment of the SLO, as the comparison shows it.
func (d SLODiff) Cell(i int) string {
	switch {
	case d.Fraction[i] != nil:
		return fmt.Sprintf("%.1f%%", 100**d.Fraction[i])
	case d.Bound[i] != nil:
		return fractionText(slo.Metric{Bound: d.Bound[i]})
	}
	return "–"
}

// Markdown writes the comparison as Markdown.
func (c *Comparison) Markdown() []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# ptdmon comparison\n\n")
	p("| | A | B |\n|---|---|---|\n")
	p("| run | %s | %s |\n", c.Runs[0].Label, c.Runs[1].Label)
	p("| range | %s to %s | %s to %s |\n", stamp(c.Runs[0].From), stamp(c.Runs[0].To), stamp(c.Runs[1].From), stamp(c.Runs[1].To))
	p("| steady span | %gs | %gs |\n", ms(c.Runs[0].Steady.Seconds), ms(c.Runs[1].Steady.Seconds))
	p("| configuration hash | %s | %s |\n", orDash(c.Runs[0].ConfigHash), orDash(c.Runs[1].ConfigHash))
	p("| KV transfer | %s | %s |\n", kvCell(c.KV.BytesPerSecond[0], c.KV.CI95[0]), kvCell(c.KV.BytesPerSecond[1], c.KV.CI95[1]))
	p("| verdict | %s | %s |\n\n", c.Verdict.A, c.Verdict.B)
	if c.Verdict.Moved {
		p("**The bottleneck moved: %s.**\n\n", c.Verdict.Text)
	} else {
		p("The verdict stayed: %s.\n\n", c.Verdict.Text)
	}
	stageTable(p, c.stageList())
	for _, d := range c.Pools {
		p("\n### Pool %s\n\n", d.Name)
		if d.Verdict.Moved {
			p("**The bottleneck moved: %s.**\n\n", d.Verdict.Text)
		} else {
			p("The verdict stayed: %s.\n\n", d.Verdict.Text)
		}
		stageTable(p, d.StageList())
	}
	for _, only := range []struct {
		run   string
		names []string
	}{{"A", c.PoolsOnlyInA}, {"B", c.PoolsOnlyInB}} {
		if len(only.names) > 0 {
			p("\nPools only in %s: %s.\n", only.run, strings.Join(only.names, ", "))
		}
	}
	if len(c.SLO) > 0 {
		p("\n| SLO of the whole request | A within | B within |\n|---|---|---|\n")
		for _, s := range c.SLO {
			p("| %s | %s | %s |\n", s.Name, s.Cell(0), s.Cell(1))
		}
	} else {
		p("\nSLO attainment: absent in both runs.\n")
	}
	c.clientMarkdown(&b)
	p("\nBeyond noise: Welch's t test on the two runs' batch means at the 5%% level.\n")
	return b.Bytes()
}

type namedDiff struct {
	Key, Name string
	D         *StageDiff
}

func (c *Comparison) stageList() []namedDiff { return c.Stages.list() }

// StageDiffs are the three stages in both runs.
type StageDiffs struct {
	Prefill StageDiff `json:"prefill"`
	KV      StageDiff `json:"kv"`
	Decode  StageDiff `json:"decode"`
}

func stageDiffs(a, b Stages) StageDiffs {
	return StageDiffs{stageDiff(a.Prefill, b.Prefill), stageDiff(a.KV, b.KV), stageDiff(a.Decode, b.Decode)}
}

// list is the stages in pipeline order, as the tables list them.
func (d *StageDiffs) list() []namedDiff {
	var out []namedDiff
	for _, s := range stage.All {
		out = append(out, namedDiff{string(s), stageTitles[s], d.of(s)})
	}
	return out
}

// of is stage s in both runs.
func (d *StageDiffs) of(s stage.Stage) *StageDiff {
	switch s {
	case stage.Prefill:
		return &d.Prefill
	case stage.KV:
		return &d.KV
	default:
		return &d.Decode
	}
}

// JSON writes the comparison as indented JSON.
func (c *Comparison) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("comparison JSON: %w", err)
	}
	return append(b, '\n'), nil
}

// HTML writes the comparison as one self-contained HTML page: the
// Markdown's tables, styled inline.
func (c *Comparison) HTML() ([]byte, error) {
	var b bytes.Buffer
	if err := compareTmpl.Execute(&b, struct {
		*Comparison
		List []namedDiff
	}{c, c.stageList()}); err != nil {
		return nil, fmt.Errorf("comparison HTML: %w", err)
	}
	return b.Bytes(), nil
}

//go:embed compare.html.tmpl
var compareTemplate string

var compareTmpl = template.Must(template.New("compare").Funcs(template.FuncMap{
	"num": num, "ci": ci, "ms": ms, "join": strings.Join, "stamp": stamp, "kvCell": kvCell,
	// A stage's completion rate is throughput: a rise is better, and only
	// a fall is marked as a warning.
	"direction": func(d StageDiff) string {
		if d.Diff != nil && *d.Diff < 0 {
			return "worse"
		}
		return "better"
	},
	"signed": func(v *float64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%+.3g", *v)
	},
	"pct": func(v *float64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%+.1f%%", 100**v)
	},
}).Parse(compareTemplate))
