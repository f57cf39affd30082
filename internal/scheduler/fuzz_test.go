package scheduler

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/metrics"
)

// FuzzReadPath drives arbitrary bodies through the whole read path: parse,
// engine adapter, ledger, and out again as JSON and /metrics. Whatever a
// target sends ends in an error or numbers; never a panic, never an
// encoding failure, never a NaN on /metrics.
func FuzzReadPath(f *testing.F) {
	files, _ := filepath.Glob("../engine/testdata/*.txt")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "", b)
		}
	}
	vllm := "# TYPE vllm:request_success counter\nvllm:request_success_total{model_name=\"m\",finished_reason=\"stop\"} %s\n" +
		"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} %s\n"
	fill := func(counter, gauge string) []byte {
		return []byte(strings.Replace(strings.Replace(vllm, "%s", counter, 1), "%s", gauge, 1))
	}
	for _, v := range [][2]string{{"1", "2"}, {"+Inf", "+Inf"}, {"NaN", "NaN"}, {"-Inf", "1e308"}, {"1e308", "-1"}} {
		f.Add(fill("0", "0"), "text/plain", fill(v[0], v[1]))
	}
	f.Add([]byte("vllm:num_requests_running 1\nvllm:num_requests_running 2\n"), "", []byte("\x00\x01"))
	f.Add([]byte("{\"a\":1}"), "application/json", []byte("<html>"))
	f.Fuzz(func(t *testing.T, first []byte, contentType string, second []byte) {
		l := ledger.New(ledger.Config{Interval: time.Second, Window: 2 * time.Second, KVRequest: kvsize.Request{Bytes: 1 << 20}, MaxSeries: 1000})
		l.SetTargets([]engine.Target{{Name: "t", Role: engine.Prefill}})
		r := exposition{engine.NewReader(engine.EngineAuto, engine.Prefill, engine.KVAuto)}
		r.MaxSeries = 2000
		t0 := time.Now()
		for i, body := range [][]byte{first, second, first} {
			at := t0.Add(time.Duration(i) * time.Second)
			obs, _, err := r.Read(body, contentType, at)
			s := ledger.Scrape{Target: "t", Time: at, Obs: obs, Err: err}
			if err != nil {
				s.Reason = ReadFailureReason(err)
			}
			l.Record(s)
			p := l.Tick(at.Add(100 * time.Millisecond))
			if _, err := json.Marshal(p); err != nil {
				t.Fatalf("point: %v", err)
			}
		}
		if _, err := json.Marshal(l.Targets(t0.Add(3 * time.Second))); err != nil {
			t.Fatalf("targets: %v", err)
		}
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(&metrics.Collector{Ledger: l, Now: func() time.Time { return t0.Add(2 * time.Second) }})
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("gather: %v", err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
				if v != v {
					t.Fatalf("%s is NaN on /metrics", mf.GetName())
				}
			}
		}
	})
}
