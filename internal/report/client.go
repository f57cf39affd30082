package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Client is the load generator's own view of the run beside the server's
// (docs/bench.md): its figures as the tool computed them, where it ran on
// the recording's clock, and the figures both sides measure, compared.
type Client struct {
	benchresult.Result
	// Command is the wrapped command's span that record measured, when
	// the run was recorded around it.
	Command   *benchresult.Span     `json:"command,omitempty"`
	Placement benchresult.Placement `json:"placement"`
	Checks    []Check               `json:"checks"`
	// Join is the per-request join with the engines' traces, when they
	// were given.
	Join *RequestJoin `json:"join,omitempty"`
}

// Check is one figure both sides measure over the benchmark's span.
// Beyond is set when they differ by more than Tolerance, the difference
// the placement and the server's sampling alone can explain.
type Check struct {
	What      string   `json:"what"`
	Client    *float64 `json:"client"`
	Server    *float64 `json:"server"`
	Source    string   `json:"server_source"`
	Tolerance *float64 `json:"tolerance"`
	Beyond    bool     `json:"beyond_noise"`
	Why       string   `json:"why,omitempty"`
}

// ttftTolerance is the relative difference in median TTFT not called: the
// server's quantile is interpolated inside histogram buckets whose bounds
// lie up to 2.5× apart (vLLM's 0.1, 0.25 s), so half the value is within
// its resolution.
const ttftTolerance = 0.5

// tpsTolerance is the relative difference in output tokens/s not called
// beyond the edges of the span: the server counts every token the decode
// engines generated, which includes a benchmark's warm-up and any other
// client.
const tpsTolerance = 0.05

// CommandSpan is the wrapped command's span from the annotations ptdmon
// record writes ("start: CMD", "end: CMD (exit status N)"); false when
// there are none.
func CommandSpan(anns []Annotation) (benchresult.Span, bool) {
	var s benchresult.Span
	for _, a := range anns {
		switch {
		case strings.HasPrefix(a.Text, "start: "):
			s.Start = a.Time
		case strings.HasPrefix(a.Text, "end: "):
			s.End = a.Time
		}
	}
	return s, s.Known()
}

// clientOf is in's client view over pts, nil without a benchmark result.
func clientOf(in Input, pts []ledger.Point, interval time.Duration) *Client {
	if in.Bench == nil {
		return nil
	}
	c := &Client{Result: *in.Bench}
	cmd := in.Command
	if !cmd.Known() {
		cmd, _ = CommandSpan(in.Meta.Annotations)
	}
	if cmd.Known() {
		c.Command = &cmd
	}
	c.Placement = benchresult.Place(c.Result, cmd)
	c.Checks = checks(c, pts, interval)
	if len(in.Journeys) > 0 {
		c.Join = joinRequests(in.Bench, in.Journeys)
	}
	return c
}

func checks(c *Client, pts []ledger.Point, interval time.Duration) []Check {
	p := c.Placement
	if !p.Placed() {
		return []Check{{What: "completions", Why: "the benchmark is not placed on the recording's clock: " + p.Why}}
	}
	// The counters are read once an interval: a span that starts or ends
	// within one interval of the recording's edge is covered, the edge
	// being in the tolerance.
	if len(pts) == 0 || pts[0].Time.After(p.From.Add(interval)) || pts[len(pts)-1].Time.Before(p.To.Add(-interval)) {
		return []Check{{What: "completions", Why: fmt.Sprintf("the recording (%s to %s) does not cover the benchmark (%s to %s)",
			stampOr(pts, 0), stampOr(pts, len(pts)-1), stamp(p.From), stamp(p.To))}}
	}
	residual := 0.0
	if p.Residual != nil {
		residual = *p.Residual
	}
	span := p.To.Sub(p.From).Seconds()
	var out []Check

	done, rate, ok := integrate(pts, p.From, p.To, func(q *ledger.Point) ledger.Num { return q.Decode.Instant })
	ck := Check{What: "completions", Source: "decode completions (Σ decode instances' completion counters)"}
	if c.Completed != nil {
		ck.Client = ptr(float64(*c.Completed))
	}
	if ok {
		ck.Server = ptr(done)
		// One interval's completions at each edge (the counters are read
		// once an interval), plus those the placement may have shifted in
		// or out, plus one for rounding.
		ck.Tolerance = ptr(rate*(2*interval.Seconds()+residual) + 1)
	} else {
		ck.Why = "no decode completion rate over the benchmark's span"
	}
	out = append(out, ck.judge(false))

	tps, _, ok := meanOver(pts, p.From, p.To, func(q *ledger.Point) ledger.Num { return q.Decode.GenTPS })
	ck = Check{What: "output tokens/s", Client: c.OutputTPS, Source: "decode generation tokens/s"}
	if ok {
		ck.Server = ptr(tps)
		ck.Tolerance = ptr(tpsTolerance + (2*interval.Seconds()+residual)/span)
	} else {
		ck.Why = "no decode generation tokens/s over the benchmark's span"
	}
	out = append(out, ck.judge(true))

	src, get := "decode TTFT histogram (from the decode engine's arrival, after prefill and the KV transfer), median of its windowed p50", func(q *ledger.Point) ledger.Num { return q.Decode.TTFT.P50 }
	if _, _, ok := meanOver(pts, p.From, p.To, func(q *ledger.Point) ledger.Num { return q.Router.TTFT.P50 }); ok {
		src, get = "router TTFT histogram, median of its windowed p50", func(q *ledger.Point) ledger.Num { return q.Router.TTFT.P50 }
	}
	ck = Check{What: "TTFT p50 (s)", Client: c.TTFT.P50, Source: src, Tolerance: ptr(ttftTolerance)}
	if v, ok := medianOver(pts, p.From, p.To, get); ok {
		ck.Server = ptr(v)
	} else {
		ck.Why = "no TTFT histogram over the benchmark's span"
		ck.Tolerance = nil
	}
	out = append(out, ck.judge(true))
	return out
}

// judge sets Beyond: |client − server| beyond the tolerance, absolute or
// relative to the server's value.
func (ck Check) judge(relative bool) Check {
	if ck.Client == nil || ck.Server == nil || ck.Tolerance == nil {
		if ck.Why == "" && ck.Client == nil {
			ck.Why = "the benchmark's file does not give it"
		}
		return ck
	}
	d := math.Abs(*ck.Client - *ck.Server)
	lim := *ck.Tolerance
	if relative {
		lim *= math.Abs(*ck.Server)
	}
	ck.Beyond = d > lim
	return ck
}

// integrate is the increase over [from, to] of the counter whose instant
// rate get gives, each point's rate covering the interval since the point
// before, apportioned by its overlap with the span; and the mean rate.
func integrate(pts []ledger.Point, from, to time.Time, get func(*ledger.Point) ledger.Num) (total, rate float64, ok bool) {
	covered := 0.0
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1].Time, pts[i].Time
		lo, hi := maxTime(a, from), minTime(b, to)
		if !hi.After(lo) {
			continue
		}
		v := get(&pts[i])
		if !v.OK() {
			continue
		}
		total += v.V * hi.Sub(lo).Seconds()
		covered += hi.Sub(lo).Seconds()
		ok = true
	}
	if covered > 0 {
		rate = total / covered
	}
	return total, rate, ok
}

func meanOver(pts []ledger.Point, from, to time.Time, get func(*ledger.Point) ledger.Num) (float64, int, bool) {
	var sum float64
	n := 0
	for i := range pts {
		if pts[i].Time.Before(from) || pts[i].Time.After(to) {
			continue
		}
		if v := get(&pts[i]); v.OK() {
			sum += v.V
			n++
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	return sum / float64(n), n, true
}

func medianOver(pts []ledger.Point, from, to time.Time, get func(*ledger.Point) ledger.Num) (float64, bool) {
	var xs []float64
	for i := range pts {
		if pts[i].Time.Before(from) || pts[i].Time.After(to) {
			continue
		}
		if v := get(&pts[i]); v.OK() && !math.IsNaN(v.V) {
			xs = append(xs, v.V)
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	slices.Sort(xs)
	return xs[len(xs)/2], true
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func stampOr(pts []ledger.Point, i int) string {
	if i < 0 || i >= len(pts) {
		return "–"
	}
	return stamp(pts[i].Time)
}
