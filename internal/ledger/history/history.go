// Package history stores a ledger's points: the ring of the newest ones,
// their per-instance detail kept as computed while hot, then by column in
// blocks, then encoded in Gorilla-style segments; and the checkpoints a
// recording keeps so that a resume restores the points rather than
// recomputing them. It holds no lock: its owner (the ledger) serialises
// every call but a Window's Complete and the encoding of Pending pieces,
// which read only what never changes.
package history

import (
	"reflect"
	"time"

	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger/point"
)

// History is the ring of the newest points. The newest points (the hot
// tail) keep their per-instance detail as it was computed; a point leaving
// the hot tail has its detail stored by column (block), and every
// SegmentPoints such blocks are encoded together as a segment, where an
// instance-point takes about 70 bytes (docs/performance.md). Readers get the
// same Points either way: a cold point's detail is rebuilt on read.
//
// The blocks and segments are the in-memory end of a recording of a run:
// one writer (the tick), per-series values stamped with the point's time,
// names and reasons in tables written once. Writing a segment out as it
// leaves the ring is what a recording adds (docs/design.md#history).
type History struct {
	slots []slot
	head  int // index of the next slot to write
	count int
	hot   int // points whose detail stays materialised
	// budget bounds the instance-points kept with detail (hot and cold);
	// older points lose theirs first.
	budget int
	kept   int
	cols   columns
	seq    uint64    // points appended so far
	open   []openRef // cold points still held as blocks, oldest first
	seal   int       // blocks gathered into one segment
	// ckpt says whether the points leaving the hot tail are handed out as
	// checkpoints (checkpoint.go); ckptNext is the seq of the next one.
	ckpt     bool
	ckptNext uint64
	// restoredTo is the newest restored point's time while no newer point
	// has been appended: the points a resume recomputes to warm the
	// counters up are not stored again.
	restoredTo time.Time
}

// slot is one point of the ring: its deployment-wide values and its
// per-instance detail, either materialised (Instances, hot), as a block
// (cold, waiting for its segment) or in a segment, or none once the budget
// dropped it.
type slot struct {
	point.Point
	folded *foldedPool // the point's one pool, when folded (cold points)
	seq    uint64
	cold   *block
	seg    *segment
	segIdx int
}

// openRef names a slot whose block waits for its segment; seq tells a slot
// reused since from the one that was compacted.
type openRef struct {
	slot *slot
	seq  uint64
}

// New returns a history of points points whose newest hot ones keep their
// per-instance detail as computed, at most budget instance-points of detail
// in all, and seal blocks gathered into a segment (SegmentPoints; fewer
// makes segments within a short test).
func New(points, budget, hot, seal int) History {
	hot = max(1, min(hot, points))
	return History{slots: make([]slot, points), hot: hot, budget: budget, seal: max(1, seal)}
}

// at returns the i-th stored point, oldest first.
func (h *History) at(i int) *slot {
	return &h.slots[(h.head-h.count+i+len(h.slots))%len(h.slots)]
}

// Append stores p as the newest point; the oldest leaves when the ring is
// full, the point leaving the hot tail is compacted, and detail over the
// budget is dropped oldest first.
func (h *History) Append(p point.Point) {
	if !h.restoredTo.IsZero() {
		if !p.Time.After(h.restoredTo) {
			return
		}
		h.restoredTo = time.Time{}
	}
	h.drop(&h.slots[h.head])
	h.seq++
	h.slots[h.head] = slot{Point: p, seq: h.seq}
	h.kept += len(p.Instances)
	h.head = (h.head + 1) % len(h.slots)
	if h.count < len(h.slots) {
		h.count++
	}
	if h.count > h.hot {
		s := h.at(h.count - 1 - h.hot)
		s.fold()
		if len(s.Instances) > 0 {
			s.cold = h.cols.compact(s.Instances)
			s.Instances = nil
			h.open = append(h.open, openRef{s, s.seq})
			if len(h.open) >= h.seal {
				h.sealOpen()
			}
		}
	}
	for i := 0; h.kept > h.budget && i < h.count; i++ {
		h.drop(h.at(i))
	}
}

// sealOpen encodes the waiting blocks still held as one segment.
func (h *History) sealOpen() {
	var blocks []*block
	var slots []*slot
	for _, o := range h.open {
		if o.slot.seq == o.seq && o.slot.cold != nil {
			blocks, slots = append(blocks, o.slot.cold), append(slots, o.slot)
		}
	}
	clear(h.open)
	h.open = h.open[:0]
	if len(blocks) == 0 {
		return
	}
	seg := h.cols.seal(blocks)
	for k, s := range slots {
		h.cols.release(s.cold)
		s.cold, s.seg, s.segIdx = nil, seg, k
	}
}

// drop forgets a slot's per-instance detail.
func (h *History) drop(s *slot) {
	h.kept -= len(s.Instances)
	s.Instances = nil
	if s.cold != nil {
		h.kept -= len(s.cold.inst)
		h.cols.release(s.cold)
		s.cold = nil
	}
	if s.seg != nil {
		h.kept -= int(s.seg.n[s.segIdx])
		if s.seg.live--; s.seg.live == 0 {
			h.cols.releaseSegment(s.seg)
		}
		s.seg = nil
	}
}

// stored says whether a slot's detail is stored by column, as a block or
// in a segment.
func (s *slot) stored() bool { return s.cold != nil || s.seg != nil }

// Window is a copy of some points, made under the ledger's lock, that are
// completed outside it: blocks and segments never change, and the copy of
// the tables holds the names and reasons their codes meant at the time of
// the copy.
type Window struct {
	points []point.Point
	cold   []coldRef // per point: its detail when stored by column
	cols   columns   // instances.vals, reasons.vals and zones only
}

// coldRef is where a Window's point finds its stored detail: a block, or
// point idx of a segment.
type coldRef struct {
	b   *block
	seg *segment
	idx int
}

// Collect copies the points newer than t, at most max of them (max < 0: no
// limit), and whether more follow.
func (h *History) Collect(t time.Time, max int) (Window, bool) {
	var w Window
	more, anyCold := false, false
	for i := 0; i < h.count; i++ {
		s := h.at(i)
		if !s.Time.After(t) {
			continue
		}
		if len(w.points) == max {
			more = true
			break
		}
		if w.points == nil {
			n := h.count - i
			if max >= 0 {
				n = min(n, max)
			}
			w.points, w.cold = make([]point.Point, 0, n), make([]coldRef, 0, n)
		}
		w.points = append(w.points, s.point())
		w.cold = append(w.cold, coldRef{s.cold, s.seg, s.segIdx})
		anyCold = anyCold || s.stored()
	}
	if anyCold {
		w.cols.instances.vals = append([]instanceKey(nil), h.cols.instances.vals...)
		w.cols.reasons.vals = append([]string(nil), h.cols.reasons.vals...)
		w.cols.zones = append([]*time.Location(nil), h.cols.zones...)
	}
	return w, more
}

// Detail says which per-instance detail a reader of the history wants; the
// zero value is every instance.
type Detail struct {
	None   bool   // no instance at all
	Target string // only this instance, when set
}

// Complete returns the window's Points with the detail d asks for,
// rebuilding cold detail: only the rows asked for are rebuilt.
func (w Window) Complete(d Detail) []point.Point {
	var rd *segReader // the segment being read, points in order
	for i := range w.points {
		p := &w.points[i]
		c := w.cold[i]
		switch {
		case d.None:
			p.Instances = nil
		case c.seg != nil:
			if rd == nil || rd.seg != c.seg {
				rd = w.cols.newSegReader(c.seg, d.Target)
			}
			p.Instances = rd.point(&w.cols, c.idx, d.Target)
		case c.b != nil:
			p.Instances = w.cols.materialise(c.b, d.Target)
		case d.Target != "":
			hot := p.Instances
			p.Instances = nil
			for k := range hot {
				if hot[k].Target == d.Target {
					// Shares the hot point's storage: points are read-only.
					p.Instances = hot[k : k+1 : k+1]
					break
				}
			}
		}
	}
	return w.points
}

// Latest returns the newest point and whether there is one.
func (h *History) Latest() (point.Point, bool) {
	if h.count == 0 {
		return point.Point{}, false
	}
	// The newest point is always hot: its detail is as computed.
	return h.at(h.count - 1).point(), true
}

// foldedPool is the one pool of a cold point whose stages are the
// point's own, as they are where the deployment is one pool: kept without
// its stages, about 1.3 KB a point less, and rebuilt on read.
type foldedPool struct {
	name, model  string
	kvRequest    kvsize.Request
	kvRequestWhy string
	instances    int
	router       point.RouterPoint
	failures     point.Failures
	phases       point.Phases
}

// fold stores s's pools folded where they can be.
func (s *slot) fold() {
	if len(s.Pools) != 1 {
		return
	}
	pp := &s.Pools[0]
	if !reflect.DeepEqual(pp.Prefill, s.Prefill) || !reflect.DeepEqual(pp.KV, s.KV) || !reflect.DeepEqual(pp.Decode, s.Decode) {
		return
	}
	s.folded = &foldedPool{pp.Name, pp.Model, pp.KVRequest, pp.KVRequestWhy, pp.Instances, pp.Router, pp.Failures, pp.Phases}
	s.Pools = nil
}

// point is the slot's point with its pools as computed.
func (s *slot) point() point.Point {
	p := s.Point
	if f := s.folded; f != nil {
		p.Pools = []point.PoolPoint{{Name: f.name, Model: f.model, KVRequest: f.kvRequest, KVRequestWhy: f.kvRequestWhy, Instances: f.instances,
			Prefill: p.Prefill, KV: p.KV, Decode: p.Decode, Router: f.router, Failures: f.failures, Phases: f.phases}}
	}
	return p
}
