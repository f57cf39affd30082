package diagnose

import (
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// summarise turns the groups' verdicts into the deployment's: the stage
// every limited group shares, Balanced when none is limited, Mixed when
// they differ. Groups without enough data do not vote.
func summarise(groups []GroupVerdict, w []ledger.Point, cfg Config) Verdict {
	v := Verdict{At: w[len(w)-1].Time, Window: w[len(w)-1].Time.Sub(w[0].Time).Seconds()}
	var voting, limited []GroupVerdict
	var withKV, withoutKV []string
	for _, g := range groups {
		v.Samples = max(v.Samples, g.Samples)
		if g.HasKV {
			withKV = append(withKV, g.Group)
		} else {
			withoutKV = append(withoutKV, g.Group)
		}
		if g.Class == Insufficient {
			continue
		}
		voting = append(voting, g)
		if g.Class != Balanced {
			limited = append(limited, g)
		}
	}
	switch {
	case len(voting) == 0:
		v.Class = Insufficient
	case len(limited) == 0:
		v.Class = Balanced
	default:
		v.Class = limited[0].Class
		for _, g := range limited[1:] {
			if g.Class != v.Class {
				v.Class = Mixed
			}
		}
	}
	v.Headline = Headline(v.Class)
	if len(groups) == 1 {
		g := groups[0]
		v.Evidence, v.Notes, v.Traffic = g.Evidence, g.Notes, g.Traffic
	} else {
		for _, g := range groups {
			line := g.Group + ": " + g.Headline
			if len(g.Evidence) > 0 {
				line += ": " + g.Evidence[0]
			}
			v.Evidence = append(v.Evidence, line)
			for _, n := range g.Notes {
				v.Notes = append(v.Notes, g.Group+": "+n)
			}
		}
		if len(limited) > 0 && len(limited) < len(groups) && v.Class != Mixed {
			names := make([]string, len(limited))
			for i, g := range limited {
				names[i] = g.Group
			}
			v.Headline += " (" + strings.Join(names, ", ") + ")"
		}
	}
	if len(withoutKV) > 0 && len(withKV) > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("KV is compared with prefill within %s only; left out: %s (no KV byte counter)",
			strings.Join(withKV, ", "), strings.Join(withoutKV, ", ")))
	}
	return v
}
