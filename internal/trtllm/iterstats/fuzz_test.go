package iterstats

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// FuzzRead feeds arbitrary bodies to one Reader, between valid polls: it must
// never panic, and what it returns must stay sane.
func FuzzRead(f *testing.F) {
	if b, err := os.ReadFile("testdata/example_7_4.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("[]"))
	f.Add([]byte(`[{"iter":1,"statsSequence":1,"attentionDpRank":0,"numCompletedRequests":2,"timestamp":"11-29-2026 10:41:07.318402",` +
		`"requestStats":[{"id":9007199254740993,"stage":"GENERATION_COMPLETE","disServingStats":{"kvCacheTransferMS":1,"kvCacheSize":100}}]},` +
		`{"iter":1,"statsSequence":1,"attentionDpRank":1,"kvCacheStats":{"reusedBlocks":5,"usedNumBlocks":1,"maxNumBlocks":0}}]`))
	f.Add([]byte(`[{"iter":-1,"statsSequence":9223372036854775807,"statsDroppedFrames":-5,"timestamp":"12-31-9999 23:59:59.999999"},` +
		`{"iter":1e400,"timestamp":"01-01-0001 00:00:00","iterLatencyMS":1e308,"hostStepTimeMS":-1}]`))
	f.Add([]byte(`[null,1,"a",[],{}]`))
	f.Add([]byte(`[{"iter":1,`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(engine.Prefill, Options{MaxBuffered: 4, MaxTrackedRequests: 2, ClockWindow: 2,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		now := time.Unix(1_800_000_000, 0)
		valid := []byte(`[{"iter":1,"numCompletedRequests":1,"timestamp":"11-29-2026 10:41:07.318402"}]`)
		var last time.Time
		prev := -1.0
		for i, in := range [][]byte{b, valid, b, []byte("[]"), b} {
			o, at, err := r.Read(in, now.Add(time.Duration(i)*time.Second))
			if err != nil {
				continue
			}
			if o == nil {
				t.Fatal("nil observation without error")
			}
			if !last.IsZero() && !at.After(last) {
				t.Fatalf("sample time went back: %v after %v", at, last)
			}
			last = at
			for _, c := range o.Counters {
				if c.Value < 0 || math.IsNaN(c.Value) || math.IsInf(c.Value, 0) {
					t.Fatalf("counter %s = %v", c.Metric, c.Value)
				}
			}
			if v, ok := o.CounterSum(engine.Completed); ok {
				if v < prev {
					t.Fatalf("Completed went down: %v < %v", v, prev)
				}
				prev = v
			}
			for g, has := range o.HasGauges {
				if has && (math.IsNaN(o.Gauges[g]) || o.Gauges[g] < 0) {
					t.Fatalf("gauge %s = %v", engine.GaugeAt(g), o.Gauges[g])
				}
			}
		}
		// Differential: a valid JSON array is never reported as damaged.
		if json.Valid(b) && bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("[")) {
			r2 := NewReader(engine.Decode, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			_, _, err := r2.Read(b, now)
			if err != nil && !errors.Is(err, ErrEmpty) {
				t.Fatalf("valid array rejected: %v", err)
			}
			if r2.Stats().ParseFailures != 0 {
				t.Fatalf("valid array reported damaged")
			}
		}
		_ = r.Stats()
		_, _, _ = r.LastIteration().Loop()
	})
}
