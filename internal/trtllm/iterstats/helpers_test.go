package iterstats

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// rec builds one IterationStats row; fields are set by the caller.
type rec map[string]any

func body(t testing.TB, recs ...rec) []byte {
	t.Helper()
	if len(recs) == 0 {
		return []byte("[]")
	}
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostStamp formats t as the engine does: "%m-%d-%Y %H:%M:%S.%f", UTC wall.
func hostStamp(t time.Time) string { return t.UTC().Format("01-02-2006 15:04:05.000000") }

// logSink records warnings.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Level >= slog.LevelWarn {
		s.msgs = append(s.msgs, r.Message)
	}
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

func (s *logSink) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.msgs {
		if bytes.Contains([]byte(m), []byte(substr)) {
			n++
		}
	}
	return n
}

func newTestReader(opts Options) (*Reader, *logSink) {
	sink := &logSink{}
	opts.Logger = slog.New(sink)
	return NewReader(engine.Decode, opts), sink
}

func mustRead(t *testing.T, r *Reader, b []byte, at time.Time) (*engine.Observation, time.Time) {
	t.Helper()
	o, ts, err := r.Read(b, at)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return o, ts
}

func counter(t *testing.T, o *engine.Observation, m engine.Metric) float64 {
	t.Helper()
	v, ok := o.CounterSum(m)
	if !ok {
		t.Fatalf("counter %s absent", m)
	}
	return v
}

func gauge(t *testing.T, o *engine.Observation, m engine.Metric) float64 {
	t.Helper()
	v, ok := o.Gauge(m)
	if !ok {
		t.Fatalf("gauge %s absent", m)
	}
	return v
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func hasNote(o *engine.Observation, substr string) bool {
	for _, n := range o.Notes {
		if bytes.Contains([]byte(n), []byte(substr)) {
			return true
		}
	}
	return false
}
