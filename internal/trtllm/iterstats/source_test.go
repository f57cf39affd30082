package iterstats

import (
	"errors"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// The iteration statistics are chosen through the engine registry, as the
// collector does, and the Source adds the loop time the Reader summarises.
func TestSourceThroughRegistry(t *testing.T) {
	src, err := engine.NewBodyReader(engine.BodyReaderConfig{Name: "gen0", Engine: engine.TensorRTLLM, Role: engine.Decode, Format: engine.FormatIterationStats})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, _, err := src.Read([]byte("[]"), "application/json", t0); !errors.Is(err, ErrEmpty) {
		t.Fatalf("first empty poll: %v, want ErrEmpty", err)
	} else if reason, ok := engine.ErrorReason(err); !ok || reason != "iterstats_empty" {
		t.Errorf("reason = %q, %v; want iterstats_empty", reason, ok)
	}
	// Two frames in overlap mode, 30 ms and 50 ms: mean 40 ms, one loop about half.
	b := body(t,
		rec{"iter": 1, "timestamp": hostStamp(t0), "iterLatencyMS": 30, "numActiveRequests": 3, "schedulerMode": "overlap"},
		rec{"iter": 2, "timestamp": hostStamp(t0.Add(40 * time.Millisecond)), "iterLatencyMS": 50, "numActiveRequests": 4, "schedulerMode": "overlap"})
	o, _, err := src.Read(b, "application/json", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := o.Gauge(engine.IterationLatency); !ok || !approx(v, 0.040) {
		t.Errorf("iteration latency = %v (%v), want 0.040", v, ok)
	}
	if v, ok := o.Gauge(engine.IterationLoop); !ok || !approx(v, 0.020) {
		t.Errorf("iteration loop = %v (%v), want 0.020 (overlap: half the latency)", v, ok)
	}
	if o.SchedulerMode != "overlap" || o.Engine != engine.TensorRTLLM {
		t.Errorf("mode %q engine %q", o.SchedulerMode, o.Engine)
	}
	// A vLLM target cannot be read as TensorRT-LLM iteration statistics.
	if _, err := engine.NewBodyReader(engine.BodyReaderConfig{Engine: engine.VLLM, Format: engine.FormatIterationStats}); !errors.Is(err, engine.ErrFormat) {
		t.Errorf("vLLM iteration stats: %v, want ErrFormat", err)
	}
}
