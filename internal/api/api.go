// Package api serves ptdmon's read-only HTTP surface: the JSON API, the
// server-sent event stream, /metrics and /healthz.
package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/metrics"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// Server holds what the handlers read.
type Server struct {
	Ledger *ledger.Ledger
	Logger *slog.Logger
	// Extra routes (the web UI) mounted beside the API.
	Extra map[string]http.Handler
	// Health, if set, adds lines to /healthz (the recording's state): the
	// process serves either way, so they do not fail it.
	Health func() []string
	// Diagnose configures the bottleneck verdict (zero: defaults).
	Diagnose diagnose.Config
	// SLO thresholds of /api/v1/advice (zero: none; its query overrides
	// them) and the advice's headroom (nil: advice.DefaultHeadroom).
	SLO      slo.Thresholds
	Headroom *float64
	// AdvicePrior, if set, is an earlier run's capacities, which the advice
	// starts from (docs/advisor.md#capacities-across-runs).
	AdvicePrior *advice.Prior
	// Requests, if set, is the request ledger of the trace receiver.
	Requests *journey.Book
	// Collectors are added to /metrics (the trace receiver's counts).
	Collectors []prometheus.Collector

	verdicts verdictCache
	past     timelineCache

	initOnce  sync.Once
	closeOnce sync.Once
	closed    chan struct{} // closed by CloseStreams
}

// Bounds of /api/v1/series: without since or last it returns the newest
// DefaultSeriesRange; one response holds at most MaxSeriesPoints points
// (older history is paged with since=).
const (
	DefaultSeriesRange = 15 * time.Minute
	MaxSeriesRange     = time.Hour
	MaxSeriesPoints    = 3600
)

// CloseStreams ends every event stream, now and later: the HTTP server
// calls it at shutdown so a connected browser does not hold the exit for
// the whole grace period.
func (s *Server) CloseStreams() {
	ch := s.done()
	s.closeOnce.Do(func() { close(ch) })
}

func (s *Server) done() chan struct{} {
	s.initOnce.Do(func() { s.closed = make(chan struct{}) })
	return s.closed
}

// Handler returns the HTTP handler for every route.
func (s *Server) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&metrics.Collector{Ledger: s.Ledger, Stage: s.stage})
	reg.MustRegister(s.Collectors...)
	reg.MustRegister(&metrics.PoolCollector{Stages: s.poolStages, Targets: s.targetPools})
	reg.MustRegister(&metrics.RouterCollector{Ledger: s.Ledger})
	reg.MustRegister(&metrics.PhaseCollector{Ledger: s.Ledger})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
	}))
	mux.HandleFunc("GET /api/v1/snapshot", s.snapshot)
	mux.HandleFunc("GET /api/v1/series", s.series)
	mux.HandleFunc("GET /api/v1/stream", s.stream)
	mux.HandleFunc("GET /api/v1/instances", s.instances)
	mux.HandleFunc("GET /api/v1/targets", s.targets)
	mux.HandleFunc("GET /api/v1/requests", s.requests)
	s.registerAdvice(mux, reg)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
		if s.Health != nil {
			for _, line := range s.Health() {
				fmt.Fprintln(w, line)
			}
		}
	})
	for pattern, h := range s.Extra {
		mux.Handle(pattern, h)
	}
	return mux
}

// Snapshot is the body of /api/v1/snapshot.
type Snapshot struct {
	Time      time.Time             `json:"time"`
	Interval  float64               `json:"interval_seconds"`
	Window    float64               `json:"window_seconds"`
	KVRequest kvsize.Request        `json:"kv_request_bytes"`
	Point     *ledger.Point         `json:"point"`
	Verdict   *diagnose.Verdict     `json:"verdict"`
	Pools     []Pool                `json:"pools"`
	Targets   []ledger.TargetStatus `json:"targets"`
	// ScrapeHealth is every failed scrape since the start and the targets
	// that restarted, summed: the page's top row says so above the fold.
	ScrapeHealth ledger.ScrapeHealth `json:"scrape_health"`

	// VerdictExamples are requests whose slowest phase is the named stage's
	// (requests_examples.go).
	VerdictExamples []RequestExample `json:"verdict_examples,omitempty"`
}

// snapshot is the newest point and verdict with every target's status;
// ?instances=0 leaves the instances and targets out (a fleet's table is
// /api/v1/instances).
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	cfg := s.Ledger.Config()
	stagesOnly := r.URL.Query().Get("instances") == "0"
	snap := Snapshot{
		Time:         time.Now(),
		Interval:     cfg.Interval.Seconds(),
		Window:       cfg.Window.Seconds(),
		KVRequest:    s.Ledger.KVRequest(),
		ScrapeHealth: s.Ledger.ScrapeHealth(),
	}
	if !stagesOnly {
		snap.Targets = s.Ledger.Targets(time.Now())
	}
	if p, ok := s.Ledger.Latest(); ok {
		snap.Verdict = s.verdictAt(p.Time)
		snap.Pools = pools(&p, snap.Verdict)
		if err := poolSLO(s.Ledger, s.SLO, snap.Pools); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if stagesOnly {
			p.Instances = nil
		}
		snap.Point = &p
		snap.VerdictExamples = s.snapshotExamples(snap.Verdict)
	}
	s.writeJSON(w, snap)
}

// Series is the body of /api/v1/series (written point by point by
// streamJSON, for clients to decode).
type Series struct {
	Interval float64        `json:"interval_seconds"`
	Window   float64        `json:"window_seconds"`
	More     bool           `json:"more,omitempty"` // newer points follow; page on with since=
	Points   []ledger.Point `json:"points"`
	// Verdict is the bottleneck verdict at the newest point.
	Verdict *diagnose.Verdict `json:"verdict"`
	// Verdicts is the verdict timeline over the points.
	Verdicts []VerdictSpan `json:"verdicts"`
}

// CompactSeries is the body of /api/v1/series?format=compact: the stream's
// encoding, so that a client decodes history and live points alike.
type CompactSeries struct {
	Format   string              `json:"format"`
	Interval float64             `json:"interval_seconds"`
	Window   float64             `json:"window_seconds"`
	Fields   map[string][]string `json:"fields"`
	More     bool                `json:"more,omitempty"` // newer points follow; page on with since=
	// Points are compact points, oldest first; the newest carries "v".
	Points []json.RawMessage `json:"points"`
	// Verdicts is the verdict timeline over the points.
	Verdicts []VerdictSpan `json:"verdicts"`
}

// series returns the points after ?since= (unix milliseconds or RFC 3339)
// or the newest ?last= seconds of them (default DefaultSeriesRange, at most
// MaxSeriesRange); at most MaxSeriesPoints, oldest first, with "more": true
// when newer points follow (page on with since= the newest point's time).
// ?instances=0 leaves per-instance detail out and ?target=NAME keeps only
// that instance's; ?format=compact uses the stream's short encoding. The body is encoded point by point as it is
// written, never whole in memory.
func (s *Server) series(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since, err := parseSince(q.Get("since"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	last := DefaultSeriesRange
	if v := q.Get("last"); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || !(secs > 0) || math.IsInf(secs, 0) || secs > MaxSeriesRange.Seconds() {
			http.Error(w, fmt.Sprintf("last=%q: want seconds > 0 and at most %g (page older history with since=)", v, MaxSeriesRange.Seconds()), http.StatusBadRequest)
			return
		}
		last = time.Duration(secs * float64(time.Second))
	} else if q.Has("since") {
		last = 0
	}
	format := q.Get("format")
	if format != "" && format != "full" && format != "compact" {
		http.Error(w, fmt.Sprintf("format=%q: want full or compact", format), http.StatusBadRequest)
		return
	}
	if p, ok := s.Ledger.Latest(); ok && last > 0 {
		if t := p.Time.Add(-last); t.After(since) {
			since = t
		}
	}
	pick, code, err := s.parsePick(q)
	if err != nil {
		http.Error(w, err.Error(), code)
		return
	}
	pts, more := s.Ledger.RangeDetail(since, MaxSeriesPoints, pick.detail())
	var verdict *diagnose.Verdict
	if len(pts) > 0 {
		verdict = s.verdictAt(pts[len(pts)-1].Time)
	}
	cfg := s.Ledger.Config()
	head := seriesHead{Interval: cfg.Interval.Seconds(), Window: cfg.Window.Seconds(), More: more}
	var enc compactEncoder
	point := func(i int) ([]byte, error) { return json.Marshal(&pts[i]) }
	if format == "compact" {
		head.Format, head.Fields = CompactFormat, CompactFields
		point = func(i int) ([]byte, error) {
			var v *diagnose.Verdict
			if i == len(pts)-1 {
				v = verdict
			}
			return enc.encode(nil, &pts[i], v), nil
		}
	}
	s.streamJSON(w, r, head, len(pts), point, s.timeline(pts), format != "compact", verdict)
}

// seriesHead is what /api/v1/series writes before its points.
type seriesHead struct {
	Format   string              `json:"format,omitempty"`
	Interval float64             `json:"interval_seconds"`
	Window   float64             `json:"window_seconds"`
	Fields   map[string][]string `json:"fields,omitempty"`
	More     bool                `json:"more,omitempty"`
}

// streamJSON writes head's fields, then "points" one by one, then the
// verdict timeline and (full form) the newest verdict, gzip-compressed when the client accepts it.
func (s *Server) streamJSON(w http.ResponseWriter, r *http.Request, head seriesHead, n int, point func(int) ([]byte, error), spans []VerdictSpan, withVerdict bool, verdict *diagnose.Verdict) {
	hb, err := json.Marshal(head)
	if err != nil {
		s.fail(w, "encode series header", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	out, finish := s.compressed(w, r)
	bw := bufio.NewWriterSize(out, 32<<10)
	bw.Write(hb[:len(hb)-1])
	bw.WriteString(`,"points":[`)
	for i := 0; i < n; i++ {
		b, err := point(i)
		if err != nil {
			// The status is sent; cut the response so the client sees a
			// broken body, not a complete-looking one.
			s.log().Error("encode series point", "err", err)
			panic(http.ErrAbortHandler)
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		if _, err := bw.Write(b); err != nil {
			return // the client went away
		}
	}
	bw.WriteByte(']')
	sb, err := json.Marshal(spans)
	if err != nil {
		s.log().Error("encode series verdicts", "err", err)
		panic(http.ErrAbortHandler)
	}
	bw.WriteString(`,"verdicts":`)
	bw.Write(sb)
	if withVerdict {
		vb, err := json.Marshal(verdict)
		if err != nil {
			s.log().Error("encode series verdict", "err", err)
			panic(http.ErrAbortHandler)
		}
		bw.WriteString(`,"verdict":`)
		bw.Write(vb)
	}
	bw.WriteString("}\n")
	if err := bw.Flush(); err != nil {
		return
	}
	finish()
}

func parseSince(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("since=%q: want unix milliseconds or RFC 3339", v)
	}
	return t, nil
}

func (s *Server) targets(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, s.Ledger.Targets(time.Now()))
}

// stream sends one "point" event per tick with the verdict at that point:
// compact (see CompactFields) unless ?format=full asks for the verbose
// point. ?instances=0 leaves per-instance detail out and ?target=NAME keeps
// only that instance's. Clients reconnect by themselves (EventSource); the
// retry hint keeps that quick.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	full := r.URL.Query().Get("format") == "full"
	pick, code, err := s.parsePick(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), code)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	ch, cancel := s.Ledger.Subscribe()
	defer cancel()
	var enc compactEncoder
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	done := s.done()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-done:
			return
		case p, ok := <-ch:
			if !ok {
				return
			}
			p.Instances = pick.apply(p.Instances)
			b, err := s.event(&enc, &p, full)
			if err != nil {
				s.log().Error("encode point", "err", err)
				return
			}
			if _, err := w.Write(b); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// event renders one SSE event.
func (s *Server) event(enc *compactEncoder, p *ledger.Point, full bool) ([]byte, error) {
	v := s.verdictAt(p.Time)
	if v != nil {
		v.At = time.Time{} // the event's own time says when
		v.Groups = briefGroups(v.Groups)
	}
	b := fmt.Appendf(nil, "event: point\nid: %d\ndata: ", p.Time.UnixMilli())
	if full {
		body, err := json.Marshal(struct {
			*ledger.Point
			Verdict *diagnose.Verdict `json:"verdict"`
		}{p, v})
		if err != nil {
			return nil, fmt.Errorf("point at %s: %w", p.Time, err)
		}
		b = append(b, body...)
	} else {
		b = enc.encode(b, p, v)
	}
	return append(b, "\n\n"...), nil
}

func (s *Server) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// writeJSON encodes v whole before sending it: an encoding error is logged
// and answered with a 500, never with a 200 and an empty body.
func (s *Server) writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.fail(w, "encode response", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

func (s *Server) fail(w http.ResponseWriter, what string, err error) {
	s.log().Error(what, "err", err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	b, _ := json.Marshal(map[string]string{"error": what + ": " + err.Error()})
	w.Write(append(b, '\n'))
}
