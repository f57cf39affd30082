package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// unavailable says why a target has no current values, or "" when it has.
func (l *Ledger) unavailable(t *target, now time.Time) string {
	switch {
	case t.n == 0 && t.lastErr != "":
		return "down: " + t.lastErr
	case t.n == 0:
		return "no successful scrape yet"
	case !t.up:
		return "down: " + t.lastErr
	}
	if age := now.Sub(t.at(0).t); age > l.cfg.StaleAfter {
		return fmt.Sprintf("stale: newest sample is %.1fs old", age.Seconds())
	}
	return ""
}

// instant is Δ/Δt between the two newest samples (PromQL irate).
func (t *target) instant(m engine.Metric) Num {
	if t.n < 2 {
		return Absent("one sample so far; a rate needs two")
	}
	a, b := t.at(1), t.at(0)
	if a.nonFinite[m] || b.nonFinite[m] {
		return Absent(whyNonFinite)
	}
	if !b.hasTotal[m] || !a.hasTotal[m] && !madeBetween(a, b) {
		return Absent("no " + m.String() + " counter in the exposition")
	}
	dt := b.t.Sub(a.t).Seconds()
	if dt <= 0 {
		return Absent("samples without time between them")
	}
	// A counter made between a and b: a's total is 0 (never set).
	return Val((b.totals[m] - a.totals[m]) / dt)
}

// span returns the oldest and newest samples inside (now-W, now] that pass ok.
func (t *target) span(now time.Time, w time.Duration, ok func(*sample) bool) (first, last *sample) {
	from := now.Add(-w)
	for i := 0; i < t.n; i++ {
		s := t.at(i)
		if s.t.After(now) {
			continue
		}
		if !s.t.After(from) {
			break
		}
		if !ok(s) {
			continue
		}
		if last == nil {
			last = s
		}
		first = s
	}
	return first, last
}

// windowed is the increase between the first and last samples inside W,
// divided by their real time difference; no extrapolation.
func (t *target) windowed(m engine.Metric, now time.Time, w time.Duration) (Num, time.Time, time.Time) {
	if t.n > 0 && t.at(0).nonFinite[m] {
		return Absent(whyNonFinite), time.Time{}, time.Time{}
	}
	first, last := t.span(now, w, func(s *sample) bool { return s.hasTotal[m] && !s.nonFinite[m] })
	if first == nil {
		if t.n > 0 && !t.at(0).hasTotal[m] {
			return Absent("no " + m.String() + " counter in the exposition"), time.Time{}, time.Time{}
		}
		return Absent("no sample inside the window"), time.Time{}, time.Time{}
	}
	if base := t.madeSince(m, now, w, first); base != nil {
		first = base
	}
	if first == last {
		return Absent("one sample inside the window; a rate needs two"), time.Time{}, time.Time{}
	}
	dt := last.t.Sub(first.t).Seconds()
	return Val((last.totals[m] - first.totals[m]) / dt), first.t, last.t
}

// madeBetween says a counter missing from a and present in b, two direct
// reads of the target, was made between them: its first value in b is
// what it counted since a.
func madeBetween(a, b *sample) bool { return a.direct && b.direct }

// madeSince is the oldest sample inside the window, where it lacks counter
// m and m was made between it and first, the oldest sample with m
// (madeBetween): its total of m is 0 (hasTotal is never unset, so a sample
// lacks m only from before the target first reported it), and the window
// counts m's first value from it, over the same span as the target's other
// counters. Without it the first burst of a counter an engine makes at its
// first increment (Dynamo's migrations, shed requests by reason, a
// gateway's failures) would be lost.
func (t *target) madeSince(m engine.Metric, now time.Time, w time.Duration, first *sample) *sample {
	if t.n == 0 || t.at(t.n - 1).hasTotal[m] {
		return nil // the target had m at its oldest sample kept: the common case
	}
	oldest, _ := t.span(now, w, func(s *sample) bool { return !s.nonFinite[m] })
	if oldest == nil || oldest.hasTotal[m] || !oldest.t.Before(first.t) || !madeBetween(oldest, first) {
		return nil
	}
	return oldest
}

// histWindow is t's histogram increase between the first and last samples
// inside the window, absent when the bounds changed in between.
func (t *target) histWindow(h int, now time.Time, w time.Duration) (histPart, bool) {
	first, last := t.span(now, w, func(s *sample) bool { return s.hists[h].present })
	if first == nil || first == last || &first.hists[h].bounds[0] != &last.hists[h].bounds[0] {
		return histPart{}, false
	}
	a, b := &first.hists[h], &last.hists[h]
	inc := make([]float64, len(b.counts))
	for i := range inc {
		inc[i] = b.counts[i] - a.counts[i]
	}
	return histPart{bounds: b.bounds, counts: inc, sum: b.sum - a.sum, count: b.count - a.count, seconds: last.t.Sub(first.t).Seconds()}, true
}

// histTotals is histWindow's sum, count and seconds without its buckets,
// for the readers that need no quantile: nothing is allocated.
func (t *target) histTotals(h int, now time.Time, w time.Duration) (histPart, bool) {
	first, last := t.span(now, w, func(s *sample) bool { return s.hists[h].present })
	if first == nil || first == last || &first.hists[h].bounds[0] != &last.hists[h].bounds[0] {
		return histPart{}, false
	}
	a, b := &first.hists[h], &last.hists[h]
	return histPart{sum: b.sum - a.sum, count: b.count - a.count, seconds: last.t.Sub(first.t).Seconds()}, true
}

func quant(acc *merged, what string) Quant {
	bounds, counts := acc.sum()
	n := len(counts)
	if n == 0 {
		none := Absent("no " + what + " histogram")
		return Quant{P50: none, P90: none, P99: none}
	}
	if counts[n-1] <= 0 {
		why := "no " + what + " observations in the window"
		n := Absent(why)
		return Quant{P50: n, P90: n, P99: n}
	}
	q := func(p float64) Num {
		v, ok := quantile(p, bounds, counts)
		if !ok {
			return Absent(what + " histogram has no +Inf bucket")
		}
		return Val(v)
	}
	return Quant{P50: q(0.5), P90: q(0.9), P99: q(0.99)}
}

// compute is the point at now: each instance's values and its pool, then
// the sums of the prefill and decode stages, of the KV transfer and of the
// routers over them, for the deployment and for each pool.
func (l *Ledger) compute(now time.Time) Point {
	p := Point{Time: now}
	meta := l.metaLocked()
	ps, notes, kvTotal := l.poolsAt(now, &p, PoolOf(meta), meta)
	noKV := "no target exports a KV byte counter (" + engine.KVSourceDisplays() + ")"
	if len(notes) > 0 {
		noKV += "; " + strings.Join(dedupe(notes), "; ")
	}
	ps.set(&p, &l.cfg, noKV)
	if l.sawKV {
		p.GlobalKVBytes = Val(l.removedKV + kvTotal)
	} else {
		p.GlobalKVBytes = Absent(noKV)
	}
	return p
}

func dedupe(s []string) []string {
	out := s[:0]
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
