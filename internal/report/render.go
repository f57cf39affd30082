package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// JSON writes the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report JSON: %w", err)
	}
	return append(b, '\n'), nil
}

// num formats a value that may be absent, with a unit suffix.
func num(v *float64, unit string) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.3g%s", *v, unit)
}

func ci(c *[2]float64) string {
	if c == nil {
		return "–"
	}
	return fmt.Sprintf("[%.3g, %.3g]", c[0], c[1])
}

// ms rounds seconds to the millisecond: sample times carry the
// nanoseconds of real HTTP exchanges, which say nothing in a report.
func ms(sec float64) float64 { return math.Round(sec*1000) / 1000 }

// bytesRate formats bytes/s in binary units.
func bytesRate(v *float64) string {
	if v == nil {
		return "–"
	}
	x, units := *v, []string{"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"}
	i := 0
	for math.Abs(x) >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	return fmt.Sprintf("%.3g %s", x, units[i])
}

// bytesOf is a byte count in binary units, B_request's as ptdmon shows it
// elsewhere ("1 GiB", not 1073741824).
func bytesOf(n int64) string {
	v := float64(n)
	return strings.TrimSuffix(bytesRate(&v), "/s")
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// stageRows are the stage table's rows in both text formats.
func (r *Report) stageRows() [][]string {
	rows := [][]string{}
	for _, s := range stage.All {
		st := r.Stages.of(s)
		rows = append(rows, []string{stageTitles[s], num(st.RequestsPerSecond, ""), ci(st.CI95), num(st.Capacity, "")})
	}
	return rows
}

// IntervalNotes say once why intervals are missing, for every stage of
// the report and of its pools: a short span leaves each of them without
// one for the same reason, which a note per cell would repeat.
func (r *Report) IntervalNotes() []string {
	var out []string
	add := func(st *Stages) {
		for _, s := range stage.All {
			if e := st.of(s); e.CI95 == nil && e.Absent != "" && !slices.Contains(out, e.Absent) {
				out = append(out, e.Absent)
			}
		}
	}
	add(&r.Stages)
	for i := range r.Pools {
		add(&r.Pools[i].Stages)
	}
	return out
}

// Markdown writes the report as Markdown.
func (r *Report) Markdown() []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	if r.Run.Name != "" {
		p("# ptdmon report: %s\n\n", r.Run.Name)
	} else {
		p("# ptdmon report\n\n")
	}
	p("**Load over the steady span: %s offered, %s served** (req/s: the arrival rate%s; decode's completions).\n\n",
		offered(r.Load), num(r.Load.ServedRequestsPerSecond, ""), basisText(r.Load.OfferedBasis))
	for i, l := range r.byPoolLines() {
		if i == 0 {
			p("The deployment's advice does not know every stage's count; its pools' own do:\n\n")
		}
		p("- %s\n", l)
		if i == len(r.byPoolLines())-1 {
			p("\n")
		}
	}
	p("## What ran\n\n")
	p("%s to %s, %d points every %gs, rate window %gs.\n\n", stamp(r.Run.From), stamp(r.Run.To), r.Run.Points, r.Run.IntervalSeconds, r.Run.WindowSeconds)
	if r.Run.Version != "" {
		p("- ptdmon version: %s\n", r.Run.Version)
	}
	if r.Run.ConfigHash != "" {
		p("- configuration hash: %s\n", r.Run.ConfigHash)
	}
	if r.Run.BRequest.Bytes > 0 {
		p("- B_request: %s (%d bytes, %s)\n", bytesOf(r.Run.BRequest.Bytes), r.Run.BRequest.Bytes, r.Run.BRequest.Basis)
	} else {
		p("- B_request: unset (KV req/s absent)\n")
	}
	p("\n| target | role | engine | model |\n|---|---|---|---|\n")
	for _, t := range r.Run.Targets {
		p("| %s | %s | %s | %s |\n", t.Name, t.Role, t.Engine, t.Model)
	}
	for i, a := range r.Run.Annotations {
		if i == 0 {
			p("\n")
		}
		p("- %s: %s\n", stamp(a.Time), a.Text)
	}
	p("\n## What happened\n\n")
	if len(r.Events) == 0 {
		p("No gap, restart, target down, change of configuration or targets, or loss in the range.\n")
	} else {
		p("| from | to | what | event |\n|---|---|---|---|\n")
		for _, e := range r.Events {
			to, what := "", e.Kind
			if !e.To.IsZero() {
				to = stamp(e.To)
			}
			if e.Seconds > 0 {
				what += fmt.Sprintf(" %gs", ms(e.Seconds))
			}
			p("| %s | %s | %s | %s |\n", stamp(e.From), to, what, e.Text)
		}
		if r.Steady.Gaps > 0 {
			p("\nThe steady span does not cross a gap.\n")
		}
	}
	p("\n## Steady state\n\n")
	if r.Steady.Found {
		p("%s to %s (%gs): %gs of warm-up and %gs at the end trimmed.\n\n", stamp(r.Steady.From), stamp(r.Steady.To),
			ms(r.Steady.Seconds), ms(r.Steady.TrimmedStart), ms(r.Steady.TrimmedEnd))
	} else {
		p("Not found (%s): the whole range is used.\n\n", r.Steady.Why)
	}
	p("How: %s.\n\n", r.Steady.Method)
	p("## Stages over the steady span\n\n")
	p("Mean req/s with its 95%% confidence interval from batch means; capacity learned at saturation.\n\n")
	p("| stage | req/s | 95%% CI | capacity req/s |\n|---|---|---|---|\n")
	for _, row := range r.stageRows() {
		p("| %s |\n", strings.Join(row, " | "))
	}
	for _, n := range r.IntervalNotes() {
		p("\nNo 95%% interval where –: %s.\n", n)
	}
	for _, n := range r.StageNotes {
		p("\nNote: %s.\n", n)
	}
	p("\n**Verdict over the steady span: %s** (%.0f%% of its points).\n\n", r.Verdict.Headline, 100*r.Verdict.Share)
	for _, e := range r.Verdict.Evidence {
		p("- %s\n", e)
	}
	if len(r.Pools) > 0 {
		p("\n## Pools\n\nEach pool's stages summed over its own instances (KV req/s by its own B_request), its verdict over the steady span, and its advice from its own saturation and arrival rate.\n\n")
		p("| pool | model | B_request | prefill req/s | KV req/s | decode req/s | verdict | advice |\n|---|---|---|---|---|---|---|---|\n")
		for i := range r.Pools {
			pl := &r.Pools[i]
			b := "unset: " + pl.KVRequestAbsent
			if pl.KVRequest.Bytes > 0 {
				b = fmt.Sprintf("%s (%s)", bytesOf(pl.KVRequest.Bytes), pl.KVRequest.Basis)
			}
			cells := []string{pl.Name, orDash(pl.Model), b}
			for _, s := range pl.StageList() {
				cells = append(cells, num(s.RequestsPerSecond, "")+" "+ci(s.CI95))
			}
			cells = append(cells, fmt.Sprintf("%s (%.0f%%)", pl.Verdict.Headline, 100*pl.Verdict.Share))
			if a := pl.Advice; a != nil {
				cells = append(cells, fmt.Sprintf("%s; prefill %s, decode %s", ratio(a.RatioText, a.RatioBound), numN(a.Prefill.Instances), numN(a.Decode.Instances)))
			} else {
				cells = append(cells, pl.AdviceWhy)
			}
			p("| %s |\n", strings.ReplaceAll(strings.Join(cells, " | "), "\n", " "))
		}
	}
	p("\n## Verdict timeline\n\n| from | to | verdict | evidence |\n|---|---|---|---|\n")
	for _, s := range r.Verdicts {
		p("| %s | %s | %s | %s |\n", stamp(s.From), stamp(s.To), s.Headline, strings.ReplaceAll(strings.Join(s.Evidence, "; "), "|", "\\|"))
	}
	p("\n## Capacity and advice\n\n| stage | per instance req/s | basis | utilisation | evidence |\n|---|---|---|---|---|\n")
	for _, c := range r.Capacities {
		p("| %s | %s | %s | %s | %s |\n", c.Stage, capacityCellMD(c), basisCell(c), utilisationCell(c), c.Evidence)
	}
	if a := r.Advice; a != nil {
		measured := ""
		if a.Demand.Basis == advice.BasisRouter {
			measured = " (arrivals measured at the router)"
		}
		p("\nAdvice for %s req/s%s at %.0f%% headroom: %s", numN(a.Demand.Target), measured, 100*a.Headroom, ratio(a.RatioText, a.RatioBound))
		p("; prefill %s, decode %s instances (now %d and %d).\n", numN(a.Prefill.Instances), numN(a.Decode.Instances), a.Prefill.Current, a.Decode.Current)
		if k := kvAdviceText(&a.KV); k != "" {
			p("%s.\n", k)
		}
		p("\n%s\n", headroomLine(a))
	} else {
		p("\nNo advice: %s.\n", r.AdviceWhy)
	}
	for _, l := range r.byPoolLines() {
		p("\n%s.\n", upperFirst(l))
	}
	p("\n## SLO attainment\n\n")
	if t := r.sloView(); t == nil {
		p("Absent: %s.\n", r.SLOAbsent)
	} else {
		p("Over the steady span, the share of requests within each SLO. The whole request is what its client sees, from the router, else from decode instances that time from the arrival, else bounded from the two legs (docs/advisor.md#the-whole-requests-slo).\n\n")
		p("| | %s |\n|---|%s\n", strings.Join(t.Heads, " | "), strings.Repeat("---|", len(t.Heads)))
		for _, row := range t.Rows {
			p("| %s | %s |\n", row.Name, strings.Join(row.Cells, " | "))
		}
		if t.Sources != "" {
			p("\nThe whole request timed by: %s.\n", t.Sources)
		}
		p("\n%s.\n", t.Note)
	}
	r.clientMarkdown(&b)
	p("\n## KV transfer\n\n")
	if r.KV.Absent != "" {
		p("Bytes/s absent: %s.\n", r.KV.Absent)
	} else {
		p("%s, 95%% CI ", bytesRate(r.KV.BytesPerSecond))
		if c := r.KV.BytesCI95; c != nil {
			p("[%s, %s]; ", bytesRate(&c[0]), bytesRate(&c[1]))
		} else {
			// Too short a steady span for the batch means.
			p("–; ")
		}
	}
	p("failures: %s (%s /s).\n", num(r.KV.Failures, ""), num(r.KV.FailuresPerSecond, ""))
	p("\n## Outlier instances\n\n")
	if len(r.Outliers) == 0 {
		p("None stood out for %.0f%% of the steady span or more.\n", 100*minOutlierShare)
	} else {
		p("| target | role | worst | seconds | flags |\n|---|---|---|---|---|\n")
		for _, o := range r.Outliers {
			p("| %s | %s | %s | %g | %s |\n", o.Target, o.Role, o.Worst, ms(o.Seconds), strings.Join(o.Flags, "; "))
		}
	}
	if nums, err := r.numbers(); err == nil {
		p("\n## Every number\n\n%s\n\n| key | value |\n|---|---|\n", numbersNote)
		for _, n := range nums {
			p("| %s | %s |\n", n.Key, n.Value)
		}
	}
	return b.Bytes()
}

// offered is the offered load, or a dash with the reason it is unknown.
func offered(l Load) string {
	if l.OfferedRequestsPerSecond == nil {
		return "– (" + l.OfferedAbsent + ")"
	}
	return num(l.OfferedRequestsPerSecond, "")
}

func basisText(b string) string {
	if b == "" {
		return ""
	}
	return ", " + b
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func numN(n ledger.Num) string {
	if !n.OK() {
		return "– (" + n.Why + ")"
	}
	return fmt.Sprintf("%.3g", n.V)
}

// ReadJSON reads a report written by JSON, for a comparison: the stages'
// batch means, the verdict, the SLO and the run's description come back
// as they were written.
func ReadJSON(b []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a ptdmon report in JSON: %w", err)
	}
	if r.Run.Points == 0 || r.Verdict.Class == "" {
		return nil, errors.New("not a ptdmon report in JSON: no run or verdict")
	}
	stages := []*Stage{&r.Stages.Prefill, &r.Stages.KV, &r.Stages.Decode}
	for i := range r.Pools {
		p := &r.Pools[i].Stages
		stages = append(stages, &p.Prefill, &p.KV, &p.Decode)
	}
	for _, s := range stages {
		if s.RequestsPerSecond != nil {
			s.Mean = *s.RequestsPerSecond
		}
	}
	return &r, nil
}

// ratio is the advised P:D, or its bound while one stage's count is
// unknown.
func ratio(text, bound string) string {
	switch {
	case text != "":
		return "P:D " + text
	case bound != "":
		return bound
	}
	return "P:D –"
}

// upperFirst is s with its first letter upper case, a sentence's start.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
