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
)

// AdviceBody is the body of /api/v1/advice.
type AdviceBody struct {
	Time   time.Time     `json:"time"`
	Window float64       `json:"window_seconds"`
	Advice advice.Advice `json:"advice"`
	// SLO attainment needs the latency histograms' bucket counts over a
	// window, which the ledger's points do not carry (they hold
	// quantiles); the Prometheus path records it (docs/advisor.md).
	SLOAbsent string `json:"slo_absent"`
}

const sloAbsent = "SLO attainment needs bucket counts over a window; ptdmon's points keep latency quantiles only. Use the recording rules of `ptdmon gen` on the Prometheus path (docs/advisor.md#slo-attainment)"

// registerAdvice mounts /api/v1/advice and adds the advisor's metrics to
// /metrics.
func (s *Server) registerAdvice(mux *http.ServeMux, reg *prometheus.Registry) {
	t := advice.NewTracker(s.Ledger)
	reg.MustRegister(&metrics.AdviceCollector{Tracker: t, Logger: s.Logger})
	mux.HandleFunc("GET /api/v1/advice", func(w http.ResponseWriter, r *http.Request) { s.advice(w, r, t) })
}

// advice answers ?multiplier=1.5 (what if the load were 1.5×), ?rate=R
// (req/s), ?headroom=0.2 and ?lookback=60s (of the arrival-rate estimate).
func (s *Server) advice(w http.ResponseWriter, r *http.Request, t *advice.Tracker) {
	q, err := parseAdviceQuery(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a, err := t.Advise(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.writeJSON(w, AdviceBody{Time: time.Now(), Window: s.Ledger.Config().Window.Seconds(), Advice: a, SLOAbsent: sloAbsent})
}

func parseAdviceQuery(r *http.Request) (advice.Query, error) {
	v := r.URL.Query()
	q := advice.Query{Multiplier: 1, Headroom: -1}
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
