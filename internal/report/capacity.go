package report

import (
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/advice"
)

// capacityCell is a capacity as the report's table shows it: the estimate
// or learned value per instance, a bound with its sign, or a dash.
func capacityCell(c advice.Capacity) string {
	switch {
	case c.PerInstance.OK():
		return fmt.Sprintf("%.3g", c.PerInstance.V)
	case c.AtLeast.OK():
		return fmt.Sprintf("≥ %.3g", c.AtLeast.V)
	}
	return "–"
}

// linkBandwidth is the link's bandwidth where the capacity was learned on
// it, "" elsewhere.
func linkBandwidth(c advice.Capacity) string {
	if !c.Bytes.OK() {
		return ""
	}
	return bytesRate(ptr(c.Bytes.V)) + " per link"
}

// capacityCellMD is capacityCell with the link's bandwidth, as Markdown
// shows it.
func capacityCellMD(c advice.Capacity) string {
	if bw := linkBandwidth(c); bw != "" {
		return capacityCell(c) + " (" + bw + ")"
	}
	return capacityCell(c)
}

// basisCell names what a capacity rests on (docs/advisor.md#bases).
func basisCell(c advice.Capacity) string {
	switch {
	case c.Basis == "":
		return "–"
	case c.Bound == advice.AtLeast:
		return c.Basis + " (at least)"
	}
	return c.Basis
}

// utilisationCell is the share of the capacity the load used, "≤" where
// the capacity is only a lower bound.
func utilisationCell(c advice.Capacity) string {
	switch {
	case !c.Utilisation.OK():
		return "–"
	case c.Bound == advice.AtLeast:
		return fmt.Sprintf("≤ %.0f%%", 100*c.Utilisation.V)
	}
	return fmt.Sprintf("%.0f%%", 100*c.Utilisation.V)
}

// headroomLine says which stage limits first and the P:D ratio of the
// capacities, or why they are not known.
func headroomLine(a *advice.Advice) string {
	s := "Limits first: " + a.LimitsFirst.Text
	if a.LimitsFirst.Unsure != "" {
		s += " (" + a.LimitsFirst.Unsure + ")"
	}
	if a.CapacityRatio.OK() {
		s += ". P:D of the capacities " + a.CapacityRatioText
	} else {
		s += ". P:D of the capacities – (" + a.CapacityRatio.Why + ")"
	}
	return s + "."
}

// byPoolLines are what the pools know of each stage whose deployment-wide
// instance count is unknown, as the page and top show it: "decode by
// pool: A ≤ 2 (now 1), B 3 (now 2)", for a run of two pools or more where
// any pool has a count or a bound. None where the deployment's count is
// known or no pool knows more.
func (r *Report) byPoolLines() []string {
	if len(r.Pools) < 2 {
		return nil
	}
	var out []string
	for _, st := range []struct {
		name string
		of   func(*advice.Advice) advice.StageAdvice
	}{
		{"prefill", func(a *advice.Advice) advice.StageAdvice { return a.Prefill }},
		{"decode", func(a *advice.Advice) advice.StageAdvice { return a.Decode }},
	} {
		if r.Advice != nil && st.of(r.Advice).Instances.OK() {
			continue
		}
		parts := make([]string, 0, len(r.Pools))
		known := false
		for i := range r.Pools {
			p := &r.Pools[i]
			if p.Advice == nil {
				parts = append(parts, p.Name+" – ("+p.AdviceWhy+")")
				continue
			}
			s := st.of(p.Advice)
			known = known || s.Instances.OK() || s.AtMost.OK()
			parts = append(parts, p.Name+" "+instancesCell(s))
		}
		if known {
			out = append(out, st.name+" by pool: "+strings.Join(parts, ", "))
		}
	}
	return out
}

// instancesCell is an advised instance count with the current one, "≤ n"
// where only bounded, "?" where unknown.
func instancesCell(s advice.StageAdvice) string {
	switch {
	case s.Instances.OK():
		return fmt.Sprintf("%.3g (now %d)", s.Instances.V, s.Current)
	case s.AtMost.OK():
		return fmt.Sprintf("≤ %.3g (now %d)", s.AtMost.V, s.Current)
	}
	return fmt.Sprintf("? (now %d)", s.Current)
}
