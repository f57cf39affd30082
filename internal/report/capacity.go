package report

import (
	"fmt"

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

// capacityCellMD is capacityCell with the link's bandwidth where the
// capacity was learned on it, as Markdown shows it.
func capacityCellMD(c advice.Capacity) string {
	v := capacityCell(c)
	if c.Bytes.OK() {
		v += " (" + bytesRate(ptr(c.Bytes.V)) + " per link)"
	}
	return v
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
