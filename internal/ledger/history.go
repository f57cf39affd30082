package ledger

import (
	"reflect"
	"time"

	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// hotSpan is how far back a point keeps its per-instance detail as the
// InstancePoints it was computed with: the verdict (twice its default 30 s
// window and an interval) and the advice's arrival rate (60 s) read inside
// it on every tick without copying. Older detail lives in column blocks; a
// longer verdict window reads correctly but rebuilds the older points.
const hotSpan = 70 * time.Second

// history is the ring of the newest points. The newest points (the hot
// tail) keep their per-instance detail as it was computed; a point leaving
// the hot tail has its detail stored by column (block), and every
// segmentPoints such blocks are encoded together as a segment, where an
// instance-point takes about 70 bytes (docs/performance.md). Readers get the
// same Points either way: a cold point's detail is rebuilt on read.
//
// The blocks and segments are the in-memory end of a recording of a run:
// one writer (the tick), per-series values stamped with the point's time,
// names and reasons in tables written once. Writing a segment out as it
// leaves the ring is what a recording adds (docs/design.md#history).
type history struct {
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
	Point
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

func newHistory(points, budget int, interval time.Duration) history {
	hot := int(hotSpan/interval) + 1
	hot = max(1, min(hot, points))
	return history{slots: make([]slot, points), hot: hot, budget: budget, seal: segmentPoints}
}

// at returns the i-th stored point, oldest first.
func (h *history) at(i int) *slot {
	return &h.slots[(h.head-h.count+i+len(h.slots))%len(h.slots)]
}

// append stores p as the newest point; the oldest leaves when the ring is
// full, the point leaving the hot tail is compacted, and detail over the
// budget is dropped oldest first.
func (h *history) append(p Point) {
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
func (h *history) sealOpen() {
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
func (h *history) drop(s *slot) {
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

// window is a copy of some points, made under the ledger's lock, that are
// completed outside it: blocks and segments never change, and the copy of
// the tables holds the names and reasons their codes meant at the time of
// the copy.
type window struct {
	points []Point
	cold   []coldRef // per point: its detail when stored by column
	cols   columns   // instances.vals, reasons.vals and zones only
}

// coldRef is where a window's point finds its stored detail: a block, or
// point idx of a segment.
type coldRef struct {
	b   *block
	seg *segment
	idx int
}

// collect copies the points newer than t, at most max of them (max < 0: no
// limit), and whether more follow.
func (h *history) collect(t time.Time, max int) (window, bool) {
	var w window
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
			w.points, w.cold = make([]Point, 0, n), make([]coldRef, 0, n)
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

// complete returns the window's Points with the detail d asks for,
// rebuilding cold detail: only the rows asked for are rebuilt.
func (w window) complete(d Detail) []Point {
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
func (l *Ledger) Latest() (Point, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := &l.hist
	if h.count == 0 {
		return Point{}, false
	}
	// The newest point is always hot: its detail is as computed.
	return h.at(h.count - 1).point(), true
}

// Since returns the points newer than t, oldest first.
func (l *Ledger) Since(t time.Time) []Point {
	l.mu.Lock()
	w, _ := l.hist.collect(t, -1)
	l.mu.Unlock()
	if out := w.complete(Detail{}); out != nil {
		return out
	}
	return []Point{}
}

// Range returns at most max points newer than t, oldest first, and whether
// more points follow them.
func (l *Ledger) Range(t time.Time, max int) ([]Point, bool) {
	return l.RangeDetail(t, max, Detail{})
}

// RangeDetail is Range with only the per-instance detail d asks for: a
// reader that shows one instance or none does not pay for rebuilding the
// others from the columns.
func (l *Ledger) RangeDetail(t time.Time, max int, d Detail) ([]Point, bool) {
	l.mu.Lock()
	w, more := l.hist.collect(t, max)
	l.mu.Unlock()
	return w.complete(d), more
}

// foldedPool is the one pool of a cold point whose stages are the
// point's own, as they are where the deployment is one pool: kept without
// its stages, about 1.3 KB a point less, and rebuilt on read.
type foldedPool struct {
	name, model  string
	kvRequest    kvsize.Request
	kvRequestWhy string
	instances    int
	router       RouterPoint
	failures     Failures
	phases       Phases
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
func (s *slot) point() Point {
	p := s.Point
	if f := s.folded; f != nil {
		p.Pools = []PoolPoint{{Name: f.name, Model: f.model, KVRequest: f.kvRequest, KVRequestWhy: f.kvRequestWhy, Instances: f.instances,
			Prefill: p.Prefill, KV: p.KV, Decode: p.Decode, Router: f.router, Failures: f.failures, Phases: f.phases}}
	}
	return p
}
