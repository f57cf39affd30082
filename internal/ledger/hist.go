package ledger

import (
	"math"
	"sort"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// histState carries one instance histogram across scrapes, reset-adjusted
// like a counter: a drop of its count restarts the adjustment.
type histState struct {
	bounds  []float64
	last    []float64
	adj     []float64
	lastSum float64
	lastCnt float64
	adjSum  float64
	adjCnt  float64
	present bool
}

// histSnap is a copy of the adjusted histogram at one sample.
type histSnap struct {
	bounds  []float64 // shared with histState while the bounds are unchanged
	counts  []float64
	sum     float64
	count   float64
	present bool
}

func (h *histState) ingest(in *engine.Histogram, out *histSnap, resets *uint64) {
	if !in.Present || len(in.Buckets) == 0 {
		out.present = false
		return
	}
	if !sameBounds(h.bounds, in.Buckets) {
		// First sight, or the engine changed its buckets: start over.
		h.bounds = make([]float64, len(in.Buckets))
		h.last = make([]float64, len(in.Buckets))
		h.adj = make([]float64, len(in.Buckets))
		for i, b := range in.Buckets {
			h.bounds[i] = b.UpperBound
			h.last[i] = b.Count
			h.adj[i] = b.Count
		}
		h.lastSum, h.lastCnt, h.adjSum, h.adjCnt = in.Sum, in.Count, in.Sum, in.Count
		h.present = true
	} else {
		reset := in.Count < h.lastCnt
		if reset {
			*resets++
		}
		for i, b := range in.Buckets {
			inc := b.Count - h.last[i]
			if reset || inc < 0 {
				inc = b.Count
			}
			h.adj[i] += inc
			h.last[i] = b.Count
		}
		incSum, incCnt := in.Sum-h.lastSum, in.Count-h.lastCnt
		if reset {
			incSum, incCnt = in.Sum, in.Count
		}
		h.adjSum += incSum
		h.adjCnt += incCnt
		h.lastSum, h.lastCnt = in.Sum, in.Count
	}
	out.present = true
	out.bounds = h.bounds
	out.counts = append(out.counts[:0], h.adj...)
	out.sum, out.count = h.adjSum, h.adjCnt
}

func sameBounds(b []float64, in []engine.Bucket) bool {
	if len(b) != len(in) {
		return false
	}
	for i := range b {
		if b[i] != in[i].UpperBound {
			return false
		}
	}
	return true
}

// quantile is PromQL's histogram_quantile over cumulative buckets sorted by
// upper bound: linear interpolation inside the bucket, the lower bound of the
// first bucket taken as 0, and the last finite bound when q lands in +Inf.
func quantile(q float64, bounds, counts []float64) (float64, bool) {
	n := len(bounds)
	if n < 2 || !math.IsInf(bounds[n-1], 1) {
		return 0, false
	}
	total := counts[n-1]
	if total <= 0 {
		return 0, false
	}
	rank := q * total
	i := sort.Search(n, func(i int) bool { return counts[i] >= rank })
	if i == n-1 {
		return bounds[n-2], true
	}
	if i == 0 && bounds[0] <= 0 {
		return bounds[0], true
	}
	start, prev := 0.0, 0.0
	if i > 0 {
		start, prev = bounds[i-1], counts[i-1]
	}
	end := bounds[i]
	inBucket := counts[i] - prev
	if inBucket <= 0 {
		return end, true
	}
	return start + (end-start)*(rank-prev)/inBucket, true
}

// merged accumulates window increases of one histogram over instances,
// which may use different buckets (vLLM's and SGLang's differ); slo.Merge
// adds them.
type merged struct {
	parts []slo.Hist
}

// histPart is one instance's histogram increase over a window.
type histPart struct {
	bounds, counts []float64
	sum, count     float64
	seconds        float64 // between the two samples
}

// addPart adds one instance's increase where it has one.
func (m *merged) addPart(p *histPart, ok bool) {
	if ok {
		m.add(p.bounds, p.counts)
	}
}

func (m *merged) add(bounds, inc []float64) {
	m.parts = append(m.parts, slo.Hist{Bounds: bounds, Counts: inc})
}

// sum returns the merged cumulative histogram over the union of bounds.
func (m *merged) sum() (bounds, counts []float64) {
	h := slo.Merge(m.parts...)
	return h.Bounds, h.Counts
}
