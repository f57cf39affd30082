// Package inspect describes what ptdmon reads from one exposition: the
// detected engine and role, every canonical value, and every family it
// ignored with the reason. `ptdmon inspect` prints it.
package inspect

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Inspection is the full description, printed as JSON by `inspect -json`.
type Inspection struct {
	// Input is the file or URL (password redacted) the exposition came from.
	Input  string `json:"source"`
	Engine string `json:"engine"`
	// Prefix is the engine's family-name prefix the exposition's families
	// carry (empty: only bare names of an engine whose prefix is
	// optional, or none of the engine's families); Matched counts the
	// engine's families found, read or not.
	Prefix   string             `json:"prefix"`
	Matched  int                `json:"families_matched"`
	Role     string             `json:"role"`
	Model    string             `json:"model,omitempty"`
	Counters map[string]float64 `json:"counters"`
	Series   map[string]int     `json:"counter_series"`
	Gauges   map[string]float64 `json:"gauges"`
	Hists    map[string]Hist    `json:"histograms"`
	Notes    []string           `json:"notes,omitempty"`
	Ignored  []engine.Ignored   `json:"ignored"`
}

// Hist is one canonical histogram, summed over the instance's series.
type Hist struct {
	Count   *float64        `json:"count"`
	Sum     *float64        `json:"sum"`
	Buckets []engine.Bucket `json:"buckets"`
}

// Of describes obs, read from src, whose families matched the engines
// found (engine.Detect).
func Of(src string, obs *engine.Observation, found []engine.Match) Inspection {
	out := Inspection{
		Input: src, Engine: string(obs.Engine), Role: string(obs.Role), Model: obs.Model,
		Counters: map[string]float64{}, Series: map[string]int{}, Gauges: map[string]float64{}, Hists: map[string]Hist{},
		Notes: obs.Notes, Ignored: obs.Ignored,
	}
	for _, m := range found {
		if m.Engine == obs.Engine {
			out.Prefix, out.Matched = m.Prefix, m.Families
		}
	}
	if out.Ignored == nil {
		out.Ignored = []engine.Ignored{}
	}
	for _, c := range obs.Counters {
		out.Counters[c.Metric.String()] += c.Value
		out.Series[c.Metric.String()]++
	}
	for i := range engine.NumGauges {
		if v, ok := obs.Gauge(engine.GaugeAt(i)); ok {
			out.Gauges[engine.GaugeAt(i).String()] = v
		}
	}
	for i, h := range obs.Histograms {
		if !h.Present {
			continue
		}
		ho := Hist{Buckets: h.Buckets}
		if h.HasCount {
			ho.Count = &h.Count
		}
		if h.HasSum {
			ho.Sum = &h.Sum
		}
		out.Hists[engine.HistogramAt(i).String()] = ho
	}
	return out
}

// WriteSummary writes the few lines a person reads first: what was
// detected, each canonical value, and how many families were ignored why.
func (in Inspection) WriteSummary(w io.Writer) error {
	var b strings.Builder
	role := in.Role
	if role == string(engine.Router) {
		role = "router (in front of the prefill and decode instances; its requests are the arrivals)"
	} else if role == "" {
		role = "unknown (pass -role prefill|decode)"
	}
	fmt.Fprintf(&b, "source     %s\nengine     %s\nprefix     %s\nrole       %s\n", in.Input, in.Engine, in.prefixLine(), role)
	if in.Model != "" {
		fmt.Fprintf(&b, "model      %s\n", in.Model)
	}
	section := func(title string, names []string, line func(string) string) {
		fmt.Fprintf(&b, "\n%s\n", title)
		if len(names) == 0 {
			b.WriteString("  none\n")
		}
		slices.Sort(names)
		for _, n := range names {
			fmt.Fprintf(&b, "  %-34s %s\n", n, line(n))
		}
	}
	section("counters (summed over series)", keys(in.Counters), func(n string) string {
		s := fmt.Sprintf("%g", in.Counters[n])
		if k := in.Series[n]; k > 1 {
			s += fmt.Sprintf("  (%d series)", k)
		}
		return s
	})
	section("gauges", keys(in.Gauges), func(n string) string { return fmt.Sprintf("%g", in.Gauges[n]) })
	section("histograms", keys(in.Hists), func(n string) string {
		h := in.Hists[n]
		s := fmt.Sprintf("%d buckets", len(h.Buckets))
		if h.Count != nil {
			s += fmt.Sprintf(", count %g", *h.Count)
		}
		if h.Sum != nil {
			s += fmt.Sprintf(", sum %.6g", *h.Sum)
		}
		return s
	})
	if len(in.Notes) > 0 {
		b.WriteString("\nnotes\n")
		for _, n := range in.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	fmt.Fprintf(&b, "\nignored    %d families", len(in.Ignored))
	if len(in.Ignored) > 0 {
		b.WriteString(":\n")
		for _, r := range reasons(in.Ignored) {
			fmt.Fprintf(&b, "  %4d  %s\n", r.n, r.reason)
		}
	} else {
		b.WriteString("\n")
	}
	b.WriteString("\n-json prints every value, bucket and ignored family.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

type reasonCount struct {
	reason string
	n      int
}

// reasons counts the ignored families by reason, most frequent first.
func reasons(ig []engine.Ignored) []reasonCount {
	n := map[string]int{}
	for _, i := range ig {
		n[i.Reason]++
	}
	out := make([]reasonCount, 0, len(n))
	for r, k := range n {
		out = append(out, reasonCount{r, k})
	}
	slices.SortFunc(out, func(a, b reasonCount) int { return cmp.Or(b.n-a.n, strings.Compare(a.reason, b.reason)) })
	return out
}

// prefixLine says which of the engine's names the exposition carries.
func (in Inspection) prefixLine() string {
	switch {
	case in.Matched == 0:
		return "none: no family of " + in.Engine + " in the exposition"
	case in.Prefix == "":
		return "none: " + families(in.Matched) + " by their bare names"
	}
	return in.Prefix + " (" + families(in.Matched) + ")"
}

func families(n int) string {
	if n == 1 {
		return "1 family"
	}
	return fmt.Sprintf("%d families", n)
}
