package reqtrace

import (
	"cmp"
	"slices"
)

// NearestRank returns the p-th percentile (0 < p ≤ 100) of sorted values
// by the nearest-rank method: the smallest value with at least p% of the
// values at or below it. It is always an observed value, never interpolated.
// Integer arithmetic keeps the rank exact (no 0.9*10 = 9.000…01 surprises).
func NearestRank(sorted []float64, p int) float64 {
	n := len(sorted)
	if n == 0 || p <= 0 || p > 100 {
		panic("reqtrace: NearestRank needs values and 0 < p ≤ 100")
	}
	rank := (p*n + 99) / 100 // ceil(p·n/100)
	return sorted[rank-1]
}

// ReasonCount is how many requests miss a span for one reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Distribution summarises one span over all requests.
type Distribution struct {
	Span      Span
	Count     int // requests with the span known
	Missing   int
	MissingBy []ReasonCount // most frequent first
	Min, Max  float64
	Mean      float64
	P50       float64
	P90       float64
	P99       float64
}

// Distribute computes the distribution of every span.
func Distribute(reqs []Request) [NumSpans]Distribution {
	var out [NumSpans]Distribution
	vals := make([]float64, 0, len(reqs))
	for s := Span(0); s < NumSpans; s++ {
		vals = vals[:0]
		reasons := map[string]int{}
		for i := range reqs {
			v := reqs[i].Spans[s]
			if v.OK {
				vals = append(vals, v.Seconds)
			} else {
				reasons[v.Reason]++
			}
		}
		d := Distribution{Span: s, Count: len(vals), Missing: len(reqs) - len(vals)}
		for r, c := range reasons {
			d.MissingBy = append(d.MissingBy, ReasonCount{r, c})
		}
		slices.SortFunc(d.MissingBy, func(a, b ReasonCount) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
		})
		if len(vals) > 0 {
			slices.Sort(vals)
			sum := 0.0
			for _, v := range vals {
				sum += v
			}
			d.Min, d.Max, d.Mean = vals[0], vals[len(vals)-1], sum/float64(len(vals))
			d.P50, d.P90, d.P99 = NearestRank(vals, 50), NearestRank(vals, 90), NearestRank(vals, 99)
		}
		out[s] = d
	}
	return out
}

// Share is a phase's part of E2E: Σ phase / Σ E2E over the Requests that
// have both known (a ratio of sums, so long requests weigh by their time).
type Share struct {
	Name     string  `json:"phase"`
	Fraction float64 `json:"fraction"`
	Requests int     `json:"requests"`
	// Missing explains a share that is not shown (Requests == 0, or an
	// "other" that came out negative because phases overlapped).
	Missing string `json:"missing,omitempty"`
}

// Shares computes the per-phase share of E2E for queue, prefill, KV
// transfer and decode, and "other" (E2E minus the four: dispatch, relays,
// gen queueing) over the requests where all five are known.
func Shares(reqs []Request) []Share {
	parts := []Span{Queue, Prefill, KVTransfer, Decode}
	var out []Share
	for _, s := range parts {
		var num, den float64
		n := 0
		for i := range reqs {
			v, e := reqs[i].Spans[s], reqs[i].Spans[E2E]
			if v.OK && e.OK {
				num, den, n = num+v.Seconds, den+e.Seconds, n+1
			}
		}
		out = append(out, share(s.String(), num, den, n))
	}
	var rest, den float64
	n := 0
	for i := range reqs {
		sp := &reqs[i].Spans
		if !sp[E2E].OK || !sp[Queue].OK || !sp[Prefill].OK || !sp[KVTransfer].OK || !sp[Decode].OK {
			continue
		}
		rest += sp[E2E].Seconds - sp[Queue].Seconds - sp[Prefill].Seconds - sp[KVTransfer].Seconds - sp[Decode].Seconds
		den += sp[E2E].Seconds
		n++
	}
	o := share("other", rest, den, n)
	if o.Requests > 0 && o.Fraction < 0 {
		o = Share{Name: "other", Requests: n, Missing: "phases overlap (worker records)"}
	}
	return append(out, o)
}

func share(name string, num, den float64, n int) Share {
	if n == 0 || den <= 0 {
		return Share{Name: name, Missing: "no request with both this phase and e2e"}
	}
	return Share{Name: name, Fraction: num / den, Requests: n}
}

// Slowest returns the n requests with the largest known E2E, slowest first;
// ties go by id so the output is stable whatever the input order.
func Slowest(reqs []Request, n int) []Request {
	// Sort indices, not the (large) requests themselves.
	idx := make([]int, 0, len(reqs))
	for i := range reqs {
		if reqs[i].Spans[E2E].OK {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(i, j int) int {
		a, b := &reqs[i], &reqs[j]
		return cmp.Or(cmp.Compare(b.Spans[E2E].Seconds, a.Spans[E2E].Seconds), cmp.Compare(a.ID, b.ID), cmp.Compare(i, j))
	})
	if n >= 0 && len(idx) > n {
		idx = idx[:n]
	}
	out := make([]Request, len(idx))
	for k, i := range idx {
		out[k] = reqs[i]
	}
	return out
}
