package benchresult

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// brStats is llm-d-benchmark's Statistics ({units, mean, p50, …}).
type brStats struct {
	Units string   `json:"units"`
	Mean  *float64 `json:"mean"`
	P50   *float64 `json:"p50"`
	P90   *float64 `json:"p90"`
	P95   *float64 `json:"p95"`
	P99   *float64 `json:"p99"`
}

func (s *brStats) dist() Dist {
	if s == nil {
		return Dist{}
	}
	k, ok := unitSeconds(s.Units)
	if !ok {
		return Dist{}
	}
	return Dist{Mean: scaled(s.Mean, k), P50: scaled(s.P50, k), P90: scaled(s.P90, k), P95: scaled(s.P95, k), P99: scaled(s.P99, k)}
}

func (s *brStats) mean() *float64 {
	if s == nil {
		return nil
	}
	return s.Mean
}

// brReport is the part of an llm-d-benchmark report v0.2/v0.2.1 the client
// view reads (br_v0_2_1_json_schema.json): run.time in ISO 8601, the
// aggregate request performance.
type brReport struct {
	Version string `json:"version"`
	Run     struct {
		Time *struct {
			Start    *time.Time `json:"start"`
			End      *time.Time `json:"end"`
			Duration *string    `json:"duration"`
		} `json:"time"`
	} `json:"run"`
	Scenario *struct {
		Load *struct {
			Standardized *struct {
				Tool        string `json:"tool"`
				ToolVersion string `json:"tool_version"`
			} `json:"standardized"`
		} `json:"load"`
	} `json:"scenario"`
	Results struct {
		RequestPerformance *struct {
			Aggregate *struct {
				Requests *struct {
					Total      *int `json:"total"`
					Failures   *int `json:"failures"`
					Incomplete *int `json:"incomplete"`
				} `json:"requests"`
				Latency *struct {
					TTFT    *brStats `json:"time_to_first_token"`
					ITL     *brStats `json:"inter_token_latency"`
					Request *brStats `json:"request_latency"`
				} `json:"latency"`
				Throughput *struct {
					RequestRate     *brStats `json:"request_rate"`
					OutputTokenRate *brStats `json:"output_token_rate"`
				} `json:"throughput"`
			} `json:"aggregate"`
		} `json:"request_performance"`
	} `json:"results"`
}

func readBR(b []byte) (Result, error) {
	var f brReport
	if err := json.Unmarshal(b, &f); err != nil {
		return Result{}, fmt.Errorf("llm-d-benchmark report %s: %w", f.Version, err)
	}
	rp := f.Results.RequestPerformance
	if rp == nil || rp.Aggregate == nil || rp.Aggregate.Requests == nil || rp.Aggregate.Requests.Total == nil {
		return Result{}, fmt.Errorf("llm-d-benchmark report %s: no results.request_performance.aggregate.requests.total", f.Version)
	}
	agg := rp.Aggregate
	rq := agg.Requests
	r := Result{Format: LLMDBenchmark, Tool: "llm-d-benchmark report " + f.Version, Clock: clockMonotonic}
	if s := f.Scenario; s != nil && s.Load != nil && s.Load.Standardized != nil && s.Load.Standardized.Tool != "" {
		r.Tool = s.Load.Standardized.Tool + " " + s.Load.Standardized.ToolVersion + " (llm-d-benchmark report " + f.Version + ")"
	}
	completed := *rq.Total
	if rq.Failures != nil {
		r.Failed = ptr(*rq.Failures)
		if *rq.Failures > 0 {
			r.FailedKind = map[string]int{"failures": *rq.Failures}
		}
		completed -= *rq.Failures
	} else {
		r.absent("failed", "no results.request_performance.aggregate.requests.failures")
	}
	if rq.Incomplete != nil && *rq.Incomplete > 0 {
		completed -= *rq.Incomplete
		r.Failed = ptr(*rq.Incomplete + deref(r.Failed))
		if r.FailedKind == nil {
			r.FailedKind = map[string]int{}
		}
		r.FailedKind["incomplete"] = *rq.Incomplete
	}
	if completed < 0 {
		return Result{}, fmt.Errorf("llm-d-benchmark report %s: requests.total %d is less than its failures", f.Version, *rq.Total)
	}
	r.Completed = &completed
	if l := agg.Latency; l != nil {
		r.TTFT, r.ITL, r.E2E = l.TTFT.dist(), l.ITL.dist(), l.Request.dist()
	}
	if t := agg.Throughput; t != nil {
		r.RequestRate, r.OutputTPS = t.RequestRate.mean(), t.OutputTokenRate.mean()
	}
	r.absent("goodput_requests_per_second", "the report format has no goodput")
	if t := f.Run.Time; t != nil {
		if t.Duration != nil {
			if d, err := isoDuration(*t.Duration); err == nil {
				r.Duration = &d
			}
		}
		if t.Start != nil && t.End != nil && !t.End.Before(*t.Start) {
			r.Clock, r.Start, r.End = clockWall, t.Start.UTC(), t.End.UTC()
			if r.Duration == nil {
				r.Duration = ptr(t.End.Sub(*t.Start).Seconds())
			}
		}
	}
	if r.Duration == nil {
		return Result{}, fmt.Errorf("llm-d-benchmark report %s: no run.time (start and end, or duration)", f.Version)
	}
	return r, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

var isoDur = regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// isoDuration reads an ISO 8601 duration of days, hours, minutes and
// seconds (PT49.97S), as pydantic writes a timedelta.
func isoDuration(s string) (float64, error) {
	m := isoDur.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" {
		return 0, errors.New("not an ISO 8601 duration: " + s)
	}
	var total float64
	for i, k := range []float64{86400, 3600, 60, 1} {
		if m[i+1] == "" {
			continue
		}
		v, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, err
		}
		total += v * k
	}
	return total, nil
}
