package benchresult

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ipStats is inference-perf's summarize(): mean, median, pNN in seconds.
type ipStats struct {
	Mean   *float64 `json:"mean"`
	Median *float64 `json:"median"`
	P90    *float64 `json:"p90"`
	P95    *float64 `json:"p95"`
	P99    *float64 `json:"p99"`
}

func (s *ipStats) dist() Dist {
	if s == nil {
		return Dist{}
	}
	return Dist{Mean: s.Mean, P50: s.Median, P90: s.P90, P95: s.P95, P99: s.P99}
}

// ipLifecycle is inference-perf's summary_lifecycle_metrics.json or
// stage_N_lifecycle_metrics.json (inference_perf/reportgen/base.py):
// request times are time.perf_counter(), so only the counts, rates and
// latencies are read.
type ipLifecycle struct {
	LoadSummary *struct {
		Count *int `json:"count"`
	} `json:"load_summary"`
	Successes *struct {
		Count   *int `json:"count"`
		Latency *struct {
			RequestLatency    *ipStats `json:"request_latency"`
			TimeToFirstToken  *ipStats `json:"time_to_first_token"`
			InterTokenLatency *ipStats `json:"inter_token_latency"`
		} `json:"latency"`
		Throughput *struct {
			RequestsPerSec     *float64 `json:"requests_per_sec"`
			OutputTokensPerSec *float64 `json:"output_tokens_per_sec"`
		} `json:"throughput"`
	} `json:"successes"`
	Failures *struct {
		Count   *int           `json:"count"`
		ByLabel map[string]int `json:"by_label"`
	} `json:"failures"`
}

func readInferencePerf(b []byte) (Result, error) {
	var f ipLifecycle
	if err := json.Unmarshal(b, &f); err != nil {
		return Result{}, fmt.Errorf("inference-perf lifecycle metrics: %w", err)
	}
	s := f.Successes
	if s == nil || s.Count == nil {
		return Result{}, errors.New("inference-perf lifecycle metrics without successes.count")
	}
	r := Result{Format: InferencePerf, Tool: "inference-perf", Clock: clockMonotonic, Completed: s.Count}
	if l := s.Latency; l != nil {
		r.TTFT, r.ITL, r.E2E = l.TimeToFirstToken.dist(), l.InterTokenLatency.dist(), l.RequestLatency.dist()
	}
	if t := s.Throughput; t != nil {
		r.RequestRate, r.OutputTPS = t.RequestsPerSec, t.OutputTokensPerSec
		// requests_per_sec is the successes over the total time, which
		// the file does not write: the length is that quotient undone.
		if t.RequestsPerSec != nil && *t.RequestsPerSec > 0 {
			r.Duration = ptr(float64(*s.Count) / *t.RequestsPerSec)
		}
	}
	if r.Duration == nil {
		r.absent("duration_seconds", "no successes.throughput.requests_per_sec to take the length from")
	}
	if fl := f.Failures; fl != nil && fl.Count != nil {
		r.Failed = fl.Count
		for k, n := range fl.ByLabel {
			if r.FailedKind == nil {
				r.FailedKind = map[string]int{}
			}
			r.FailedKind[k] = n
		}
	} else {
		r.absent("failed", "no failures.count")
	}
	r.absent("goodput_requests_per_second", "the lifecycle metrics have no goodput (goodput_metrics only with an SLO)")
	return r, nil
}
