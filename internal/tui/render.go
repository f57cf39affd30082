package tui

import (
	"fmt"
	"io"
	"math"
	"strings"
)

var sparks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws vs (nil = absent, drawn as a space) scaled to max.
func sparkline(vs []*float64, width int, max float64) string {
	if len(vs) > width {
		vs = vs[len(vs)-width:]
	}
	var b strings.Builder
	for _, v := range vs {
		switch {
		case v == nil || math.IsNaN(*v):
			b.WriteRune(' ')
		case max <= 0:
			b.WriteRune(sparks[0])
		default:
			i := int(*v / max * float64(len(sparks)-1))
			i = min(max0(i), len(sparks)-1)
			b.WriteRune(sparks[i])
		}
	}
	return b.String()
}

func max0(i int) int {
	if i < 0 {
		return 0
	}
	return i
}

// num formats a value, or "—" when absent.
func num(v *float64, unit string) string {
	if v == nil {
		return "—"
	}
	return humanize(*v, unit)
}

func humanize(v float64, unit string) string {
	switch unit {
	case "B", "B/s":
		suffixes := []string{"B", "KiB", "MiB", "GiB", "TiB"}
		i := 0
		for math.Abs(v) >= 1024 && i < len(suffixes)-1 {
			v /= 1024
			i++
		}
		s := suffixes[i]
		if unit == "B/s" {
			s += "/s"
		}
		return fmt.Sprintf("%.2f %s", v, s)
	case "%":
		return fmt.Sprintf("%.0f%%", v*100)
	case "":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Render writes one frame. history holds the points before snap's, oldest
// first; width is the terminal width.
func Render(w io.Writer, snap *Snapshot, history []Point, width int) {
	if width < 60 {
		width = 60
	}
	p := snap.Point
	fmt.Fprintf(w, "ptdmon  %s  W=%gs  B_request %s (%s)\n", snap.Time.Local().Format("15:04:05"), snap.Window, bReq(snap), snap.KVRequest.Source)
	if p == nil {
		fmt.Fprintln(w, "\nno data yet: waiting for the first tick")
		return
	}
	if v := snap.Verdict; v != nil {
		fmt.Fprintf(w, "VERDICT  %s\n", v.Headline)
		for _, e := range v.Evidence {
			fmt.Fprintf(w, "         · %s\n", e)
		}
	}
	spark := width - 44
	fmt.Fprintf(w, "\n%-9s %12s %12s  %s\n", "req/s", "instant", "window", fmt.Sprintf("last %d ticks (window rate)", spark))
	stages := []struct {
		name string
		get  func(*Point) *Stage
	}{{"Prefill", func(q *Point) *Stage { return &q.Prefill }}, {"KV", func(q *Point) *Stage { return &q.KV }}, {"Decode", func(q *Point) *Stage { return &q.Decode }}}
	var series [3][]*float64
	peak := 0.0
	for i, st := range stages {
		for j := range history {
			series[i] = append(series[i], st.get(&history[j]).Window)
		}
		series[i] = append(series[i], st.get(p).Window)
		for _, v := range series[i] {
			if v != nil && *v > peak {
				peak = *v
			}
		}
	}
	var reasons []string
	for i, st := range stages {
		s := st.get(p)
		fmt.Fprintf(w, "%-9s %12s %12s  %s\n", st.name, num(s.Instant, "/s"), num(s.Window, "/s"), sparkline(series[i], spark, peak))
		if s.Window == nil {
			reasons = append(reasons, fmt.Sprintf("%s absent: %s", st.name, s.Absent["requests_per_second_window"]))
		} else if len(s.Missing) > 0 {
			reasons = append(reasons, fmt.Sprintf("%s partial: %d of %d up, missing %s", st.name, s.Up, s.N, strings.Join(s.Missing, ", ")))
		}
	}
	if v := snap.Verdict; v != nil && len(history) > 0 {
		stages := make([]string, 0, len(history)+1)
		for _, q := range history {
			stages = append(stages, q.Verdict)
		}
		stages = append(stages, v.Stage)
		fmt.Fprintf(w, "%-9s %25s  %s\n", "Verdict", "P K A D · M", verdictStrip(stages, spark))
	}
	for _, r := range reasons {
		fmt.Fprintf(w, "  %s\n", r)
	}
	fmt.Fprintf(w, "\nKV bytes/s  instant %s  window %s\n", num(p.KV.Bytes, "B/s"), num(p.KV.BytesW, "B/s"))
	fmt.Fprintf(w, "Prefill  running %s  waiting %s  bootstrap %s  inflight %s  KV usage %s\n",
		num(p.Prefill.Running, ""), num(p.Prefill.Waiting, ""), num(p.Prefill.Queues["bootstrap"], ""), num(p.Prefill.Queues["inflight"], ""), num(p.Prefill.KVUsage, "%"))
	fmt.Fprintf(w, "Decode   running %s  waiting %s  prealloc %s  transfer %s  KV usage %s\n",
		num(p.Decode.Running, ""), num(p.Decode.Waiting, ""), num(p.Decode.Queues["prealloc"], ""), num(p.Decode.Queues["transfer"], ""), num(p.Decode.KVUsage, "%"))

	errs := map[string]string{}
	for _, t := range snap.Targets {
		errs[t.Name] = t.LastError
	}
	fmt.Fprintf(w, "\n%-20s %-8s %-7s %-5s %9s %11s %8s %8s  %s\n", "instance", "role", "engine", "up", "req/s", "KV B/s", "running", "waiting", "note")
	for _, in := range p.Instances {
		up := "up"
		note := ""
		if !in.Up {
			up = "DOWN"
			note = errs[in.Target]
		} else if in.Window == nil {
			note = in.Absent["requests_per_second_window"]
		}
		fmt.Fprintf(w, "%-20s %-8s %-7s %-5s %9s %11s %8s %8s  %s\n", clip(in.Target, 20), in.Role, in.Engine, up,
			num(in.Window, "/s"), num(in.KVBytes, "B/s"), num(in.Running, ""), num(in.Waiting, ""), clipFront(note, width-85))
	}
}

func bReq(s *Snapshot) string {
	if s.KVRequest.Bytes <= 0 {
		return "unset"
	}
	return humanize(s.KVRequest.Bytes, "B")
}

func clip(s string, n int) string {
	if n < 8 {
		n = 8
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// clipFront keeps the end of s: the innermost cause of a wrapped Go error.
func clipFront(s string, n int) string {
	if n < 8 {
		n = 8
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
