//go:build !norecord

package record

import (
	"math"
	"time"

	"github.com/prometheus/prometheus/model/value"
)

// A read is recorded with the values that changed since the target's
// previous read only, and with every value at least every completeEvery:
// most of an engine's counters and the buckets below its latencies stay
// the same from one read to the next, and an append to the TSDB costs
// alike whether the value changed or not. A read of changes is marked
// with nameChanges; a series that vanished from the target's reads gets
// Prometheus' staleness marker, as Prometheus writes it for a series gone
// from a scrape. The reader carries each value forward through the reads
// of changes that follow it (readSlice), so a replay is fed exactly the
// reads the live ledger took. Every value is written again after a failed
// read, a gap in the reads, or whatever made the appender forget its state
// (a failed commit), so a reader never carries a value across them.
const completeEvery = 10 * time.Second

// nameChanges marks a read that holds only the values that changed.
const nameChanges = "ptd_read_scrape_changes"

// staleNaN is the staleness marker's value.
var staleNaN = math.Float64frombits(value.StaleNaN)

// reads is the appender's account of one target's reads.
type reads struct {
	n        uint32 // the target's reads begun; a ref whose kept is n holds this read's value
	complete int64  // ms of its last complete read; 0: the next read is complete
	last     int64  // ms of its last read
	// kept counts the refs this read holds, prior those the previous one
	// held, again those of prior this one holds too: a read that holds
	// again every series the previous one held leaves none to sweep.
	kept, prior, again int
}

// begin starts the read at ts and reports whether it is one of changes
// only.
func (s *reads) begin(ts int64) (changes bool) {
	s.n++
	s.prior, s.kept, s.again = s.kept, 0, 0
	gap := ts - s.last
	s.last = ts
	every := completeEvery.Milliseconds()
	if s.complete == 0 || ts-s.complete >= every || gap > every/2 {
		s.complete = ts
		return false
	}
	return true
}

// value appends v to r, unless the read is one of changes and r holds v
// from the target's previous read.
func (w *appender) value(r *ref, s *reads, changes bool, ts int64, v float64) error {
	bits := math.Float64bits(v)
	held := r.kept != 0 && r.kept == s.n-1
	if changes && held && r.last == bits {
		s.keep(r, held)
		return nil
	}
	written, err := w.put(r, ts, v)
	r.kept = 0
	if written {
		r.last = bits
		s.keep(r, held)
	}
	return err
}

// keep counts r as held by this read.
func (s *reads) keep(r *ref, held bool) {
	r.kept = s.n
	s.kept++
	if held {
		s.again++
	}
}

// stale marks r's series gone at ts if a reader holds a value of it.
func (w *appender) stale(r *ref, ts int64) error {
	if r.kept == 0 {
		return nil
	}
	r.kept = 0
	_, err := w.put(r, ts, staleNaN)
	return err
}

// sweep marks stale every series of the target its read at ts left out.
func (w *appender) sweep(tr *targetRefs, ts int64) error {
	if tr.reads.again == tr.reads.prior {
		return nil // every series the previous read held is held again
	}
	n := tr.reads.n
	var err error
	gone := func(r *ref) {
		if err == nil && r.kept != n {
			err = w.stale(r, ts)
		}
	}
	for _, r := range tr.counters {
		gone(r)
	}
	for i := range tr.gauges {
		gone(&tr.gauges[i])
	}
	for i := range tr.hists {
		h := &tr.hists[i]
		for j := range h.buckets {
			gone(&h.buckets[j])
		}
		gone(&h.sum)
		gone(&h.count)
	}
	return err
}

// carried walks one series' samples (t, v) over a target's reads in time
// order: each read with a sample of it takes that value, and each read of
// changes without one takes the value the series holds, until a complete
// read, a failed one or a staleness marker ends it.
type carried struct {
	held    float64
	holding bool
}

// at gives the read r the series' sample v (has: there is one at r's
// time), through take.
func (c *carried) at(r *read, has bool, v float64, take func(*read, float64)) {
	switch {
	case has && value.IsStaleNaN(v):
		c.holding = false
	case has:
		c.held, c.holding = v, true
		take(r, v)
	case !r.ok || !r.changes:
		c.holding = false
	case c.holding:
		take(r, c.held)
	}
}

// lookBack is how far before a span its reader must start so that the
// first read of changes in it finds each value it carries: the last
// complete read of every target is at most completeEvery and a half
// before any read of changes.
func lookBack(m Meta) int64 {
	return 2 * time.Duration(m.CompleteEvery).Milliseconds()
}
