package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ptdmon/ptdmon/internal/advice"
)

// Advice is what a frame shows of /api/v1/advice: the advised instances
// per stage, KV bandwidth and P:D, and the SLO attainment. Absent values
// are null with their reason in "absent", as the API writes them.
type Advice struct {
	Advice struct {
		Demand struct {
			Target *float64          `json:"target_requests_per_second"`
			Basis  string            `json:"basis"`
			Absent map[string]string `json:"absent"`
		} `json:"demand"`
		Headroom float64     `json:"headroom"`
		Prefill  stageAdvice `json:"prefill"`
		Decode   stageAdvice `json:"decode"`
		KV       struct {
			BytesPerSecond *float64          `json:"bytes_per_second"`
			Absent         map[string]string `json:"absent"`
		} `json:"kv"`
		PD          string            `json:"pd"`
		PDBound     string            `json:"pd_bound"`
		Short       []string          `json:"short"`
		Absent      map[string]string `json:"absent"`
		LimitsFirst struct {
			Stage  string `json:"stage"`
			Text   string `json:"text"`
			Unsure string `json:"unsure"`
		} `json:"limits_first"`
		CapacityRatio *float64 `json:"pd_capacity_ratio"`
	} `json:"advice"`
	SLO       *advice.SLOReport `json:"slo"`
	SLOAbsent string            `json:"slo_absent"`
}

type stageAdvice struct {
	Stage     string            `json:"stage"`
	Instances *float64          `json:"instances"`
	AtMost    *float64          `json:"at_most"`
	Current   int               `json:"current"`
	Absent    map[string]string `json:"absent"`
}

// Advice fetches /api/v1/advice.
func (c *Client) Advice(ctx context.Context) (*Advice, error) {
	var a Advice
	if err := c.get(ctx, "/api/v1/advice", &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// AdviceResult is one read of /api/v1/advice: the advice, or why there is
// none.
type AdviceResult struct {
	Advice *Advice
	Err    error
}

// renderAdvice writes the advice and the SLO attainment in a few lines;
// Render clips them to the width.
func renderAdvice(w io.Writer, a *Advice, err error, width int) {
	if a == nil {
		fmt.Fprintf(w, "Advice   unavailable: %v\n", err)
		return
	}
	ad := a.Advice
	target := "arrival rate unknown"
	if ad.Demand.Target != nil {
		target = fmt.Sprintf("%.2f req/s +%.0f%%", *ad.Demand.Target, ad.Headroom*100)
		if ad.Demand.Basis == advice.BasisRouter {
			target += " (router)"
		}
	}
	kv := "?"
	if ad.KV.BytesPerSecond != nil {
		kv = humanize(*ad.KV.BytesPerSecond, "B/s")
	}
	pd := "P:D ?"
	switch {
	case ad.PD != "":
		pd = "P:D " + ad.PD
	case ad.PDBound != "":
		pd = ad.PDBound // says "P:D ≤ …" itself
	}
	fmt.Fprintf(w, "Advice   %s: prefill %s  decode %s\n", target, count(ad.Prefill), count(ad.Decode))
	short := ""
	if len(ad.Short) > 0 {
		short = "  short: " + strings.Join(ad.Short, ", ")
	}
	fmt.Fprintf(w, "         KV %s  %s%s\n", kv, pd, short)
	// The next limit, and the P:D ratio the capacities balance at.
	if lf := ad.LimitsFirst; lf.Stage != "" {
		next := "next limit: " + lf.Text
		if ad.CapacityRatio != nil {
			next += fmt.Sprintf("; capacities P:D %.2f:1", *ad.CapacityRatio)
		}
		say(w, "         ", "           ", next, width)
	}
	for _, s := range []stageAdvice{ad.Prefill, ad.Decode} {
		if s.Instances == nil {
			say(w, "  ", "    ", s.Stage+": "+s.Absent["instances"], width)
		}
	}
	switch {
	case a.SLO == nil:
		say(w, "SLO      ", "         ", a.SLOAbsent, width)
	case a.SLO.Decode == nil:
		say(w, "SLO      ", "         ", a.SLO.Absent["decode"], width)
	default:
		d := a.SLO.Decode
		var parts []string
		for _, m := range d.Metrics {
			v := "?"
			if m.Within != nil {
				v = fmt.Sprintf("%.1f%%", m.Within.Fraction*100)
				if m.Within.AtLeast {
					v = "≥" + v
				}
			}
			parts = append(parts, fmt.Sprintf("%s≤%gs %s", strings.ToUpper(m.Name), m.Threshold, v))
		}
		good := "goodput ?"
		if d.Absent == "" {
			good = fmt.Sprintf("goodput %.2f/%.2f req/s", d.Goodput, d.Rate)
		}
		fmt.Fprintf(w, "SLO      %s  %s\n", strings.Join(parts, "  "), good)
		if d.Misses != nil && d.Misses.Dominant != "" {
			fmt.Fprintf(w, "         E2E misses dominated by %s time (decode instances, last %gs)\n", d.Misses.Dominant, a.SLO.Seconds)
		}
	}
}

// count is an advised instance count with the current one, "≤ n" when only
// bounded, "?" when unknown.
func count(s stageAdvice) string {
	switch {
	case s.Instances != nil:
		return fmt.Sprintf("%g (now %d)", *s.Instances, s.Current)
	case s.AtMost != nil:
		return fmt.Sprintf("≤%g (now %d)", *s.AtMost, s.Current)
	}
	return fmt.Sprintf("? (now %d)", s.Current)
}

// say writes s wrapped to width: lead before its first line, indent
// before the others.
func say(w io.Writer, lead, indent, s string, width int) {
	for i, l := range wrap(s, width-max(utf8.RuneCountInString(lead), utf8.RuneCountInString(indent))) {
		if i == 0 {
			fmt.Fprintln(w, lead+l)
		} else {
			fmt.Fprintln(w, indent+l)
		}
	}
}
