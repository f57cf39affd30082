package benchresult

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// guidellmDist is a StatusDistributionSummary's "successful" part
// (guidellm/schemas/statistics.py).
type guidellmDist struct {
	Mean        *float64 `json:"mean"`
	Percentiles struct {
		P50 *float64 `json:"p50"`
		P90 *float64 `json:"p90"`
		P95 *float64 `json:"p95"`
		P99 *float64 `json:"p99"`
	} `json:"percentiles"`
}

type guidellmStatus struct {
	Successful *guidellmDist `json:"successful"`
}

func (s guidellmStatus) dist(k float64) Dist {
	d := s.Successful
	if d == nil {
		return Dist{}
	}
	return Dist{Mean: scaled(d.Mean, k), P50: scaled(d.Percentiles.P50, k), P90: scaled(d.Percentiles.P90, k),
		P95: scaled(d.Percentiles.P95, k), P99: scaled(d.Percentiles.P99, k)}
}

func (s guidellmStatus) mean() *float64 {
	if s.Successful == nil {
		return nil
	}
	return s.Successful.Mean
}

// guidellmReport is GuideLLM's benchmarks.json (GenerativeBenchmarksReport,
// metadata version 2): times are Unix seconds.
type guidellmReport struct {
	Metadata struct {
		Version         int    `json:"version"`
		GuidellmVersion string `json:"guidellm_version"`
	} `json:"metadata"`
	Benchmarks []struct {
		SchedulerMetrics struct {
			StartTime *float64 `json:"start_time"`
			EndTime   *float64 `json:"end_time"`
		} `json:"scheduler_metrics"`
		Metrics struct {
			RequestTotals *struct {
				Successful *int `json:"successful"`
				Errored    *int `json:"errored"`
				Incomplete *int `json:"incomplete"`
			} `json:"request_totals"`
			RequestsPerSecond     guidellmStatus `json:"requests_per_second"`
			RequestLatency        guidellmStatus `json:"request_latency"`
			TimeToFirstTokenMs    guidellmStatus `json:"time_to_first_token_ms"`
			InterTokenLatencyMs   guidellmStatus `json:"inter_token_latency_ms"`
			OutputTokensPerSecond guidellmStatus `json:"output_tokens_per_second"`
		} `json:"metrics"`
	} `json:"benchmarks"`
}

func unixTime(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC()
}

func readGuideLLM(b []byte) (Result, error) {
	var f guidellmReport
	if err := json.Unmarshal(b, &f); err != nil {
		return Result{}, fmt.Errorf("GuideLLM benchmarks: %w", err)
	}
	if len(f.Benchmarks) == 0 {
		return Result{}, errors.New("GuideLLM benchmarks: no benchmark in the file")
	}
	// A sweep writes one benchmark per load: the report reads the last.
	bm := f.Benchmarks[len(f.Benchmarks)-1]
	m := bm.Metrics
	if m.RequestTotals == nil || m.RequestTotals.Successful == nil {
		return Result{}, errors.New("GuideLLM benchmarks: no metrics.request_totals.successful")
	}
	r := Result{Format: GuideLLM, Tool: "guidellm", Clock: clockWall,
		Completed:   m.RequestTotals.Successful,
		RequestRate: m.RequestsPerSecond.mean(), OutputTPS: m.OutputTokensPerSecond.mean(),
		TTFT: m.TimeToFirstTokenMs.dist(1e-3), ITL: m.InterTokenLatencyMs.dist(1e-3), E2E: m.RequestLatency.dist(1)}
	if f.Metadata.GuidellmVersion != "" {
		r.Tool += " " + f.Metadata.GuidellmVersion
	}
	if e := m.RequestTotals.Errored; e != nil {
		failed := *e
		r.FailedKind = map[string]int{"errored": *e}
		if in := m.RequestTotals.Incomplete; in != nil && *in > 0 {
			failed += *in
			r.FailedKind["incomplete"] = *in
		}
		r.Failed = &failed
	} else {
		r.absent("failed", "no metrics.request_totals.errored")
	}
	sm := bm.SchedulerMetrics
	if sm.StartTime == nil || sm.EndTime == nil || *sm.EndTime < *sm.StartTime {
		return Result{}, errors.New("GuideLLM benchmarks: no scheduler_metrics.start_time and end_time")
	}
	r.Start, r.End = unixTime(*sm.StartTime), unixTime(*sm.EndTime)
	r.Duration = ptr(*sm.EndTime - *sm.StartTime)
	r.absent("goodput_requests_per_second", "GuideLLM reports no goodput")
	if len(f.Benchmarks) > 1 {
		r.absent("earlier_runs", fmt.Sprintf("the file holds %d benchmarks (a sweep); this is the last", len(f.Benchmarks)))
	}
	return r, nil
}
