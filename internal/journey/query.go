package journey

import (
	"cmp"
	"slices"
	"time"
)

// Query selects, orders and pages records.
type Query struct {
	Pool, Instance string
	// Phase with Min: only records whose Phase took at least Min seconds.
	Phase Phase
	Min   float64
	// Sort is "slowest" (E2E, or Phase when given, longest first; the
	// default) or "newest" (latest arrival first).
	Sort          string
	Offset, Limit int
}

// Sort orders.
const (
	SortSlowest = "slowest"
	SortNewest  = "newest"
)

// Page is one page of a query's records and how many matched in all.
type Page struct {
	Total   int
	Records []Record
}

// Select applies q to recs (which it reorders).
func Select(recs []Record, q Query) Page {
	keep := recs[:0]
	for _, r := range recs {
		if q.Pool != "" && r.Pool != q.Pool {
			continue
		}
		if q.Instance != "" && r.PrefillInstance != q.Instance && r.DecodeInstance != q.Instance {
			continue
		}
		if q.Phase != "" {
			if v, ok := r.Phase(q.Phase); !ok || v < q.Min {
				continue
			}
		}
		keep = append(keep, r)
	}
	key := func(r *Record) float64 {
		if q.Phase != "" {
			v, _ := r.Phase(q.Phase)
			return v
		}
		return r.E2E
	}
	if q.Sort == SortNewest {
		slices.SortStableFunc(keep, func(a, b Record) int { return b.Arrival.Compare(a.Arrival) })
	} else {
		slices.SortStableFunc(keep, func(a, b Record) int {
			if c := cmp.Compare(key(&b), key(&a)); c != 0 {
				return c
			}
			return b.Arrival.Compare(a.Arrival)
		})
	}
	p := Page{Total: len(keep)}
	lo := min(max(q.Offset, 0), len(keep))
	hi := len(keep)
	if q.Limit > 0 {
		hi = min(lo+q.Limit, hi)
	}
	p.Records = keep[lo:hi]
	return p
}

// InFlight returns the records whose requests were in flight at t: arrived
// by t and not yet finished (or with an unknown end).
func InFlight(recs []Record, t time.Time) []Record {
	var out []Record
	for _, r := range recs {
		if r.Arrival.After(t) {
			continue
		}
		if r.E2E >= 0 && r.Arrival.Add(dur(r.E2E)).Before(t) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// histogramBounds are the upper bounds, in seconds, of the phase
// histograms: vLLM's request_latency_buckets (vllm/v1/metrics/loggers.py),
// the buckets of its queue, prefill, decode and e2e histograms, so the two
// compare bucket for bucket.
var histogramBounds = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}

// Histogram is a cumulative histogram of one phase's durations.
type Histogram struct {
	Count int       `json:"count"`
	Sum   float64   `json:"sum"`
	Le    []float64 `json:"le"`
	// Buckets[i] counts the durations ≤ Le[i], as Prometheus' cumulative
	// buckets do; the +Inf bucket is Count.
	Buckets []int `json:"buckets"`
}

// Histograms returns one histogram per phase over recs.
func Histograms(recs []Record) map[Phase]*Histogram {
	out := map[Phase]*Histogram{}
	for _, p := range Phases {
		out[p] = &Histogram{Le: histogramBounds, Buckets: make([]int, len(histogramBounds))}
	}
	for i := range recs {
		for _, iv := range recs[i].Waterfall {
			h := out[iv.Phase]
			v := iv.End - iv.Start
			h.Count++
			h.Sum += v
			for j, le := range histogramBounds {
				if v <= le {
					h.Buckets[j]++
				}
			}
		}
	}
	return out
}
