package report

import (
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/slo"
)

// sloTable is the SLO section as both text formats show it: a column per
// SLO and goodput; a row for the whole request of the deployment, one per
// pool, and the decode leg's, labelled as such
// (docs/advisor.md#the-whole-requests-slo).
type sloTable struct {
	Heads []string
	Rows  []sloRow
	// Sources say what timed each SLO of the whole request.
	Sources string
	Note    string
}

type sloRow struct {
	Name  string
	Cells []string
}

// decodeLegRow names the row of the decode instances' own histograms,
// which decodeLegNote explains.
const (
	decodeLegRow  = "decode leg only"
	decodeLegNote = "The decode leg only is the decode instances' own histograms: where they time from the hand-over (vLLM, TensorRT-LLM), they leave out the prefill queue, prefill and the transfer, and are not the request's"
)

// sloView is the report's SLO table, nil when the SLO is absent.
func (r *Report) sloView() *sloTable {
	if r.SLO == nil {
		return nil
	}
	t := &sloTable{Note: decodeLegNote}
	th := r.SLO.Thresholds
	for _, x := range []struct {
		name string
		v    float64
	}{{"ttft", th.TTFT}, {"itl", th.ITL}, {"e2e", th.E2E}} {
		if x.v > 0 {
			t.Heads = append(t.Heads, fmt.Sprintf("%s ≤ %gs", x.name, x.v))
		}
	}
	t.Heads = append(t.Heads, "goodput req/s")
	row := func(name string, a *slo.Attainment, why string) {
		cells := make([]string, 0, len(t.Heads))
		if a == nil {
			for range t.Heads {
				cells = append(cells, "–")
			}
			cells[len(cells)-1] = "– (" + why + ")"
		} else {
			for _, m := range a.Metrics {
				cells = append(cells, fractionText(m))
			}
			cells = append(cells, goodputText(a))
		}
		t.Rows = append(t.Rows, sloRow{Name: name, Cells: cells})
	}
	row("whole request", r.SLO.Request, "not computed by this report's source")
	if r.SLO.Request != nil {
		t.Sources = sourcesText(r.SLO.Request)
	}
	for i := range r.Pools {
		p := &r.Pools[i]
		var a *slo.Attainment
		why := p.SLOAbsent
		if p.SLO != nil {
			a = p.SLO.Request
		}
		row("pool "+p.Name+": whole request", a, why)
	}
	row(decodeLegRow, r.SLO.Decode, r.SLO.Absent["decode"])
	return t
}

// fractionText is an SLO's attainment: measured, "a–b%" where only
// bounded, "–" with the reason where absent.
func fractionText(m slo.Metric) string {
	switch {
	case m.Within != nil:
		v := fmt.Sprintf("%.1f%%", 100*m.Within.Fraction)
		if m.Within.AtLeast {
			v = "≥ " + v
		}
		return v
	case m.Bound != nil && m.Bound.Min == m.Bound.Max:
		return fmt.Sprintf("%.1f%% (bound)", 100*m.Bound.Min)
	case m.Bound != nil:
		return fmt.Sprintf("%.1f–%.1f%% (bound)", 100*m.Bound.Min, 100*m.Bound.Max)
	}
	return "– (" + m.Absent + ")"
}

// goodputText is the requests/s within every SLO of the served rate, a
// range where an SLO is only bounded.
func goodputText(a *slo.Attainment) string {
	switch {
	case a.Absent != "":
		return "– (" + a.Absent + ")"
	case a.Bounded && a.GoodputMin == a.GoodputMax:
		return fmt.Sprintf("%.3g of %.3g", a.GoodputMin, a.Rate)
	case a.Bounded:
		return fmt.Sprintf("%.3g–%.3g of %.3g", a.GoodputMin, a.GoodputMax, a.Rate)
	}
	return fmt.Sprintf("%.3g of %.3g", a.Goodput, a.Rate)
}

// sourcesText says what timed each SLO of the whole request: "TTFT, E2E:
// prefill leg + decode leg (bound); ITL: decode".
func sourcesText(a *slo.Attainment) string {
	var order []string
	by := map[string][]string{}
	for _, m := range a.Metrics {
		src := m.Source
		if m.Absent != "" {
			src = "absent"
		}
		if by[src] == nil {
			order = append(order, src)
		}
		by[src] = append(by[src], strings.ToUpper(m.Name))
	}
	parts := make([]string, 0, len(order))
	for _, src := range order {
		parts = append(parts, strings.Join(by[src], ", ")+": "+src)
	}
	return strings.Join(parts, "; ")
}
