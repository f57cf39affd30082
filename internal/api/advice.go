package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/metrics"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// AdviceBody is the body of /api/v1/advice.
type AdviceBody struct {
	Time   time.Time     `json:"time"`
	Window float64       `json:"window_seconds"`
	Advice advice.Advice `json:"advice"`
	// SLO is the attainment over the ledger's window W; SLOAbsent says why
	// it is not there.
	SLO       *advice.SLOReport `json:"slo"`
	SLOAbsent string            `json:"slo_absent,omitempty"`
	// Pools is each pool's own advice (docs/pools.md).
	Pools []advice.PoolAdvice `json:"pools"`
}

const noThresholds = "no SLO threshold set: slo.ttft, slo.itl or slo.e2e in ptdmon.yaml, -slo-ttft/-slo-itl/-slo-e2e, or ?ttft=&itl=&e2e= (seconds)"

// registerAdvice mounts /api/v1/advice and adds the advisor's metrics to
// /metrics.
func (s *Server) registerAdvice(mux *http.ServeMux, reg *prometheus.Registry) {
	t := advice.NewTracker(s.Ledger, s.AdvicePrior)
	reg.MustRegister(&metrics.AdviceCollector{Tracker: t, Logger: s.Logger, Headroom: s.headroom()})
	pt := advice.NewPoolTracker(s.Ledger)
	mux.HandleFunc("GET /api/v1/advice", func(w http.ResponseWriter, r *http.Request) { s.advice(w, r, t, pt) })
}

// advice answers ?multiplier=1.5 (what if the load were 1.5×), ?rate=R
// (req/s), ?headroom=0.2 and ?lookback=60s (of the arrival-rate estimate).
// headroom is the configured headroom, or -1 for advice.DefaultHeadroom.
func (s *Server) headroom() float64 {
	if s.Headroom == nil {
		return -1
	}
	return *s.Headroom
}

func (s *Server) advice(w http.ResponseWriter, r *http.Request, t *advice.Tracker, pt *advice.PoolTracker) {
	q, err := s.parseAdviceQuery(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	th, err := parseThresholds(r, s.SLO)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a, err := t.Advise(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pools, err := pt.Advise(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body := AdviceBody{Time: time.Now(), Window: s.Ledger.Config().Window.Seconds(), Advice: a, Pools: pools}
	b, ok := s.Ledger.Buckets()
	switch {
	case th == (slo.Thresholds{}):
		body.SLOAbsent = noThresholds
	case !ok:
		body.SLOAbsent = "no point yet: the first scrapes are still under way"
	default:
		rep, err := advice.Attainment(th, b)
		if err == nil {
			rep.Request, err = requestSLO(s.Ledger, th, b)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body.SLO = &rep
	}
	s.writeJSON(w, body)
}

// parseThresholds starts from the configured thresholds; ttft, itl and e2e
// (seconds, 0 to drop one) override them.
func parseThresholds(r *http.Request, th slo.Thresholds) (slo.Thresholds, error) {
	v := r.URL.Query()
	for _, p := range []struct {
		name string
		dst  *float64
	}{{"ttft", &th.TTFT}, {"itl", &th.ITL}, {"e2e", &th.E2E}} {
		s := v.Get(p.name)
		if s == "" {
			continue
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return th, fmt.Errorf("%s=%q: want a threshold in seconds ≥ 0", p.name, s)
		}
		*p.dst = x
	}
	return th, nil
}

func (s *Server) parseAdviceQuery(r *http.Request) (advice.Query, error) {
	v := r.URL.Query()
	q := advice.Query{Multiplier: 1, Headroom: s.headroom()}
	num := func(name string, dst *float64, ok func(float64) bool, want string) error {
		s := v.Get(name)
		if s == "" {
			return nil
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || !ok(x) {
			return fmt.Errorf("%s=%q: want %s", name, s, want)
		}
		*dst = x
		return nil
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if err := num("multiplier", &q.Multiplier, func(x float64) bool { return finite(x) && x > 0 }, "a factor > 0"); err != nil {
		return q, err
	}
	if err := num("rate", &q.Rate, func(x float64) bool { return finite(x) && x > 0 }, "requests/s > 0"); err != nil {
		return q, err
	}
	if err := num("headroom", &q.Headroom, func(x float64) bool { return finite(x) && x >= 0 && x < 1 }, "0 ≤ headroom < 1"); err != nil {
		return q, err
	}
	if s := v.Get("lookback"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return q, fmt.Errorf("lookback=%q: want a duration > 0 (e.g. 60s)", s)
		}
		q.Lookback = d
	}
	return q, nil
}
