package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ptdmon/ptdmon/internal/journey"
)

// Bounds of /api/v1/requests.
const (
	DefaultRequestsLimit = 50
	MaxRequestsLimit     = 1000
)

// RequestsResponse is the body of /api/v1/requests.
type RequestsResponse struct {
	// Total is how many requests matched; Requests holds one page of them.
	Total    int           `json:"total"`
	Offset   int           `json:"offset"`
	Limit    int           `json:"limit"`
	Requests []RequestJSON `json:"requests"`
	// Histograms of each phase over every request that matched.
	Histograms map[journey.Phase]*journey.Histogram `json:"histograms"`
	// SLOMisses counts the matching requests' SLO misses per pool by the
	// phase blamed (with slo thresholds configured).
	SLOMisses MissSummary `json:"slo_misses,omitempty"`
	// Reason says why there are no requests at all (no receiver).
	Reason string `json:"reason,omitempty"`
}

// RequestJSON is one request's journey.
type RequestJSON struct {
	ID              string `json:"id"`
	TraceID         string `json:"trace_id,omitempty"`
	Pool            string `json:"pool,omitempty"`
	Model           string `json:"model,omitempty"`
	PrefillInstance string `json:"prefill_instance,omitempty"`
	DecodeInstance  string `json:"decode_instance,omitempty"`
	// Arrival in Unix seconds; the phases in seconds. Unknown values are
	// left out: a phase's reason is in Absent.
	Arrival          float64                   `json:"arrival"`
	Legs             string                    `json:"legs"`
	Phases           map[journey.Phase]float64 `json:"phases"`
	Absent           map[journey.Phase]string  `json:"absent,omitempty"`
	Waterfall        []journey.Interval        `json:"waterfall"`
	TTFT             *float64                  `json:"ttft,omitempty"`
	E2E              *float64                  `json:"e2e,omitempty"`
	PromptTokens     *int64                    `json:"prompt_tokens,omitempty"`
	CompletionTokens *int64                    `json:"completion_tokens,omitempty"`
	// SLOMisses are the SLOs this request missed, each with the phase
	// that took the largest share of it.
	SLOMisses []journey.Miss `json:"slo_misses,omitempty"`
}

// RequestOf is the wire form of one record.
func RequestOf(r *journey.Record) RequestJSON {
	out := RequestJSON{ID: r.ID, TraceID: r.TraceID, Pool: r.Pool, Model: r.Model,
		PrefillInstance: r.PrefillInstance, DecodeInstance: r.DecodeInstance,
		Arrival: float64(r.Arrival.UnixNano()) / 1e9, Legs: r.Legs,
		Phases: map[journey.Phase]float64{}, Waterfall: r.Waterfall}
	if out.Waterfall == nil {
		out.Waterfall = []journey.Interval{}
	}
	for _, iv := range r.Waterfall {
		out.Phases[iv.Phase] = iv.End - iv.Start
	}
	if len(r.Absent) > 0 {
		out.Absent = r.Absent
	}
	pf := func(v float64) *float64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	pi := func(v int64) *int64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	out.TTFT, out.E2E = pf(r.TTFT), pf(r.E2E)
	out.PromptTokens, out.CompletionTokens = pi(r.PromptTokens), pi(r.CompletionTokens)
	return out
}

// requests serves /api/v1/requests: the requests the trace receiver joined,
// slowest or newest first, filtered by pool, instance, a phase over a
// threshold, or the moment they were in flight, and paged.
//
//	?sort=slowest|newest  ?pool=  ?instance=  ?phase=NAME&min=SECONDS
//	?at=UNIX_MS (in flight then)  ?offset=  ?limit= (≤ 1000)
//	?slo_miss=ttft|e2e (missed that SLO of the slo thresholds)  ?id= (one request)
func (s *Server) requests(w http.ResponseWriter, r *http.Request) {
	q, at, err := parseRequestsQuery(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	miss, err := parseSLOMiss(r.URL.Query().Get("slo_miss"), s.SLO)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := RequestsResponse{Offset: q.Offset, Limit: q.Limit, Requests: []RequestJSON{}}
	if s.Requests == nil {
		resp.Reason = "no request ledger: start serve with -otlp.listen or otlp.trtllm_perf_metrics (docs/traces.md)"
		resp.Histograms = journey.Histograms(nil)
		s.writeJSON(w, resp)
		return
	}
	recs := s.Requests.Records()
	if !at.IsZero() {
		recs = journey.InFlight(recs, at)
	}
	if miss != "" {
		recs = onlyMissing(recs, miss, s.SLO)
	}
	if id := r.URL.Query().Get("id"); id != "" {
		recs = onlyID(recs, id)
	}
	all := journey.Select(recs, journey.Query{Pool: q.Pool, Instance: q.Instance, Phase: q.Phase, Min: q.Min, Sort: q.Sort})
	resp.Total = all.Total
	resp.Histograms = journey.Histograms(all.Records)
	resp.SLOMisses = summarizeMisses(all.Records, s.SLO)
	lo := min(q.Offset, len(all.Records))
	hi := min(lo+q.Limit, len(all.Records))
	for i := lo; i < hi; i++ {
		rj := RequestOf(&all.Records[i])
		rj.SLOMisses = journey.Misses(&all.Records[i], s.SLO.TTFT, s.SLO.E2E)
		resp.Requests = append(resp.Requests, rj)
	}
	s.writeJSON(w, resp)
}

func parseRequestsQuery(r *http.Request) (journey.Query, time.Time, error) {
	v := r.URL.Query()
	q := journey.Query{Pool: v.Get("pool"), Instance: v.Get("instance"), Sort: v.Get("sort"), Limit: DefaultRequestsLimit}
	var at time.Time
	switch q.Sort {
	case "":
		q.Sort = journey.SortSlowest
	case journey.SortSlowest, journey.SortNewest:
	default:
		return q, at, fmt.Errorf("sort=%q: want slowest or newest", q.Sort)
	}
	if p := v.Get("phase"); p != "" {
		ph, ok := journey.ParsePhase(p)
		if !ok {
			return q, at, fmt.Errorf("phase=%q: want one of %v", p, journey.Phases)
		}
		q.Phase = ph
	}
	if m := v.Get("min"); m != "" {
		f, err := strconv.ParseFloat(m, 64)
		if err != nil || f < 0 || f != f {
			return q, at, fmt.Errorf("min=%q: want seconds ≥ 0", m)
		}
		if q.Phase == "" {
			return q, at, fmt.Errorf("min=%q needs phase=", m)
		}
		q.Min = f
	}
	num := func(name string, lo, hi int, dst *int) error {
		s := v.Get(name)
		if s == "" {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%s=%q: want a whole number from %d to %d", name, s, lo, hi)
		}
		*dst = n
		return nil
	}
	if err := num("offset", 0, 1<<30, &q.Offset); err != nil {
		return q, at, err
	}
	if err := num("limit", 1, MaxRequestsLimit, &q.Limit); err != nil {
		return q, at, err
	}
	if s := v.Get("at"); s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms <= 0 {
			return q, at, fmt.Errorf("at=%q: want Unix milliseconds", s)
		}
		at = time.UnixMilli(ms)
	}
	return q, at, nil
}
