package metrics_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/metrics"
)

// TestEnginesAwake: a vLLM decode server whose two engines sleep (the
// engine package's fixture) is exported with 0 engines awake, up, not
// down; an engine that does not say has no series.
func TestEnginesAwake(t *testing.T) {
	body, err := os.ReadFile("../engine/testdata/vllm_decode_asleep.txt")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{{Name: "d0", Role: engine.Decode, Engine: engine.VLLM}, {Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}})
	rd := engine.NewReader(engine.VLLM, engine.Decode, engine.KVAuto)
	obs, err := rd.Read(body, "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	l.Record(ledger.Scrape{Target: "d0", Time: t0, Obs: obs})
	p0, err := engine.NewReader(engine.VLLM, engine.Prefill, engine.KVAuto).Read(prefillExposition(10), "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	l.Record(ledger.Scrape{Target: "p0", Time: t0, Obs: p0})
	l.Tick(t0)
	c := &metrics.Collector{Ledger: l, Now: func() time.Time { return t0 }}
	want := `# HELP ptd_engines_awake Engines of the instance awake (vLLM's engine_sleep_state{sleep_state="awake"}, added over engines): 0 where the instance sleeps on purpose (sleep mode), up and serving nothing, not down.
# TYPE ptd_engines_awake gauge
ptd_engines_awake{engine="vllm",model="meta-llama/Llama-3.1-8B-Instruct",role="decode",target="d0"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "ptd_engines_awake"); err != nil {
		t.Error(err)
	}
}
