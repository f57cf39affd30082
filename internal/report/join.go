package report

import (
	"fmt"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
	"github.com/ptdmon/ptdmon/internal/journey"
)

// RequestJoin is the client's requests joined with the engines' traced
// requests by the id the tool sent as X-Request-ID (AIPerf's
// x_request_id), which vLLM takes as the request's id (docs/bench.md).
type RequestJoin struct {
	// Requests are the client's requests with an id, Traced the engines'
	// records given, Joined those found on both sides.
	Requests int `json:"requests"`
	Traced   int `json:"traced"`
	Joined   int `json:"joined"`
	// TTFTOutside is the client's TTFT minus the engines' (from the first
	// engine's arrival): the time the request spent outside the engines
	// before its first token — network, router, proxy. ArrivalDelay is
	// the first engine's arrival minus the client's send time, both on the
	// wall clock.
	TTFTOutside  benchresult.Dist `json:"ttft_outside_engines_seconds"`
	ArrivalDelay benchresult.Dist `json:"arrival_delay_seconds"`
	Why          string           `json:"why,omitempty"`
}

// minContainedID is the shortest client id matched inside a longer server
// id (vLLM may prefix or suffix the id it was given: "cmpl-<id>-0").
const minContainedID = 8

// maxIDDelimiters bounds the parts an id is cut into.
const maxIDDelimiters = 12

// idParts are the parts of a server id between its delimiters (any
// character but a letter or digit), whole ones only: "cmpl-ab-12-0"
// holds "ab-12" but not "b-1". The client's id is looked up among them.
func idParts(id string) []string {
	var cuts []int
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 || len(cuts) > maxIDDelimiters {
		return nil
	}
	starts, ends := []int{0}, []int{}
	for _, c := range cuts {
		starts, ends = append(starts, c+1), append(ends, c)
	}
	ends = append(ends, len(id))
	var out []string
	for _, a := range starts {
		for _, b := range ends {
			if b-a >= minContainedID && (a > 0 || b < len(id)) {
				out = append(out, id[a:b])
			}
		}
	}
	return out
}

// joinRequests joins r's requests with recs.
func joinRequests(r *benchresult.Result, recs []journey.Record) *RequestJoin {
	j := &RequestJoin{Traced: len(recs)}
	byID := make(map[string]*journey.Record, len(recs))
	inside := map[string]*journey.Record{}
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
		for _, part := range idParts(recs[i].ID) {
			if _, ok := inside[part]; !ok {
				inside[part] = &recs[i]
			}
		}
	}
	find := func(id string) *journey.Record {
		if rec := byID[id]; rec != nil {
			return rec
		}
		if len(id) < minContainedID {
			return nil
		}
		return inside[id]
	}
	var outside, delay []float64
	for _, q := range r.Requests {
		if q.ID == "" || !q.OK {
			continue
		}
		j.Requests++
		rec := find(q.ID)
		if rec == nil {
			continue
		}
		j.Joined++
		if rec.TTFT >= 0 && q.TTFT > 0 {
			outside = append(outside, q.TTFT-rec.TTFT)
		}
		if r.Clock == "wall" && !rec.Arrival.IsZero() {
			sent := time.Unix(0, int64(q.Start*1e9))
			delay = append(delay, rec.Arrival.Sub(sent).Seconds())
		}
	}
	switch {
	case j.Requests == 0:
		j.Why = fmt.Sprintf("the %s file carries no request ids", r.Tool)
	case j.Joined == 0:
		j.Why = fmt.Sprintf("none of the %d request ids is among the %d traced requests' ids", j.Requests, j.Traced)
	}
	j.TTFTOutside = summarize(outside)
	j.ArrivalDelay = summarize(delay)
	return j
}

func summarize(xs []float64) benchresult.Dist {
	return benchresult.Dist{Mean: benchresult.Mean(xs), P50: benchresult.Quantile(xs, 0.5), P90: benchresult.Quantile(xs, 0.9),
		P95: benchresult.Quantile(xs, 0.95), P99: benchresult.Quantile(xs, 0.99)}
}
