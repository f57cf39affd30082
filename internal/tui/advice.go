package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/slo"
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
	// Pools are each pool's own advice, shown where the deployment's
	// count is unknown.
	Pools []poolAdvice `json:"pools"`
}

type poolAdvice struct {
	Pool   string `json:"pool"`
	Advice struct {
		Prefill stageAdvice `json:"prefill"`
		Decode  stageAdvice `json:"decode"`
	} `json:"advice"`
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
func renderAdvice(w io.Writer, a *Advice, err error, width int, balanced bool) {
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
	// The next limit (under the verdict when it is Balanced), and the P:D
	// ratio the capacities balance at.
	if lf := ad.LimitsFirst; lf.Stage != "" && !balanced {
		next := "next limit: " + lf.Text
		if ad.CapacityRatio != nil {
			next += fmt.Sprintf("; capacities P:D %.2f:1", *ad.CapacityRatio)
		}
		say(w, "         ", "           ", next, width)
	}
	for i, s := range []stageAdvice{ad.Prefill, ad.Decode} {
		if s.Instances == nil {
			say(w, "  ", "    ", byPool(a.Pools, i == 0, s.Stage, s.Absent["instances"]), width)
		}
	}
	switch {
	case a.SLO == nil:
		say(w, "SLO      ", "         ", a.SLOAbsent, width)
	case a.SLO.Request == nil:
		say(w, "SLO      ", "         ", "the whole request's attainment is not served by this ptdmon", width)
	default:
		r := a.SLO.Request
		parts := make([]string, 0, len(r.Metrics))
		for _, m := range r.Metrics {
			parts = append(parts, fmt.Sprintf("%s≤%gs %s", strings.ToUpper(m.Name), m.Threshold, fraction(m)))
		}
		fmt.Fprintf(w, "SLO      %s  %s\n", strings.Join(parts, "  "), goodput(r))
		if src := sources(r); src != "" {
			say(w, "         ", "         ", src, width)
		}
		if d := a.SLO.Decode; d != nil && d.Misses != nil && d.Misses.Dominant != "" {
			fmt.Fprintf(w, "         E2E misses dominated by %s time (last %gs)\n", d.Misses.Dominant, a.SLO.Seconds)
		}
	}
}

// fraction is an SLO's attainment: measured, "a–b%" where only bounded,
// "?" where absent.
func fraction(m slo.Metric) string {
	switch {
	case m.Within != nil:
		v := fmt.Sprintf("%.1f%%", m.Within.Fraction*100)
		if m.Within.AtLeast {
			v = "≥" + v
		}
		return v
	case m.Bound != nil && m.Bound.Min == m.Bound.Max:
		return fmt.Sprintf("%.1f%%", m.Bound.Min*100)
	case m.Bound != nil:
		return fmt.Sprintf("%.0f–%.0f%%", m.Bound.Min*100, m.Bound.Max*100)
	}
	return "?"
}

// goodput is the requests/s within every SLO, a range where an SLO is only
// bounded.
func goodput(a *slo.Attainment) string {
	switch {
	case a.Absent != "":
		return "goodput ?"
	case a.Bounded:
		return fmt.Sprintf("goodput %.2f–%.2f/%.2f req/s", a.GoodputMin, a.GoodputMax, a.Rate)
	}
	return fmt.Sprintf("goodput %.2f/%.2f req/s", a.Goodput, a.Rate)
}

// sources says what timed each SLO of the whole request, and why one is
// absent: "whole request: TTFT, E2E prefill leg + decode leg (bound); ITL
// decode".
func sources(a *slo.Attainment) string {
	var order []string
	by := map[string][]string{}
	for _, m := range a.Metrics {
		src := m.Source
		if m.Absent != "" {
			src = "absent: " + m.Absent
		}
		if by[src] == nil {
			order = append(order, src)
		}
		by[src] = append(by[src], strings.ToUpper(m.Name))
	}
	parts := make([]string, 0, len(order))
	for _, src := range order {
		parts = append(parts, strings.Join(by[src], ", ")+" "+src)
	}
	return "whole request: " + strings.Join(parts, "; ")
}

// byPool is what the pools know of a stage whose deployment-wide count is
// unknown: each pool's own advice where any pool has a count or a bound
// ("prefill by pool: Qwen/Qwen3-32B 3 (now 1), …"), else why the stage's
// count is unknown.
func byPool(pools []poolAdvice, prefill bool, stage, why string) string {
	parts := make([]string, 0, len(pools))
	known := false
	for _, p := range pools {
		s := p.Advice.Decode
		if prefill {
			s = p.Advice.Prefill
		}
		known = known || s.Instances != nil || s.AtMost != nil
		parts = append(parts, p.Pool+" "+count(s))
	}
	if !known || len(pools) < 2 {
		return stage + ": " + why
	}
	return stage + " by pool: " + strings.Join(parts, ", ")
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
