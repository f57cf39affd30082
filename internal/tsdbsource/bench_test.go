package tsdbsource

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// BenchmarkApply measures turning one step's query results into ledger
// samples: 1,000 vLLM engines, 2 samples of each of their series.
func BenchmarkApply(b *testing.B) {
	const engines = 1000
	t0 := model.Time(1_700_000_000_000)
	sample := func(i int) []model.SamplePair {
		return []model.SamplePair{{Timestamp: t0, Value: model.SampleValue(i)}, {Timestamp: t0 + 1000, Value: model.SampleValue(i + 3)}}
	}
	var health model.Matrix
	metrics := make([]model.Matrix, 4)
	for e := range engines {
		base := model.Metric{"job": "ptdmon-engines", "instance": model.LabelValue(fmt.Sprintf("10.0.%d.%d:8000", e/250, e%250)),
			LabelTarget: model.LabelValue(fmt.Sprintf("vllm-%d", e)), LabelRole: "prefill", LabelEngine: "vllm", "model_name": "m"}
		with := func(name string, kv ...string) model.Metric {
			m := base.Clone()
			m[model.MetricNameLabel] = model.LabelValue(name)
			for i := 0; i+1 < len(kv); i += 2 {
				m[model.LabelName(kv[i])] = model.LabelValue(kv[i+1])
			}
			return m
		}
		health = append(health, &model.SampleStream{Metric: with("up"), Values: []model.SamplePair{{Timestamp: t0, Value: 1}, {Timestamp: t0 + 1000, Value: 1}}})
		for _, r := range []string{"stop", "length", "abort", "error"} {
			metrics[0] = append(metrics[0], &model.SampleStream{Metric: with("vllm:request_success_total", "finished_reason", r), Values: sample(e)})
		}
		metrics[1] = append(metrics[1], &model.SampleStream{Metric: with("vllm:prompt_tokens_total"), Values: sample(e)})
		metrics[2] = append(metrics[2], &model.SampleStream{Metric: with("vllm:flagcx_total_bytes_transferred_total"), Values: sample(e)})
		metrics[3] = append(metrics[3], &model.SampleStream{Metric: with("vllm:num_requests_running"), Values: sample(e)})
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := ledger.New(ledger.Config{Interval: time.Second, Logger: quiet})
	s, err := New(l, Options{URL: "http://127.0.0.1:1", Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		// Move the samples on, so each iteration feeds new ones.
		shift := model.Time(2000 * (i + 1))
		for _, m := range append([]model.Matrix{health}, metrics...) {
			for _, ss := range m {
				for j := range ss.Values {
					ss.Values[j].Timestamp += shift - model.Time(2000*i)
				}
			}
		}
		s.apply(t0.Add(time.Duration(shift)*time.Millisecond).Time(), health, metrics)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/engines, "ns/engine")
}
