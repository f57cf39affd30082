package benchresult

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// aiperfMetric is one metric of AIPerf's profile_export_aiperf.json
// (JsonMetricResult in aiperf/common/models/export_models.py).
type aiperfMetric struct {
	Unit string   `json:"unit"`
	Avg  *float64 `json:"avg"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P95  *float64 `json:"p95"`
	P99  *float64 `json:"p99"`
}

type aiperfProfile struct {
	RequestThroughput     *aiperfMetric `json:"request_throughput"`
	RequestCount          *aiperfMetric `json:"request_count"`
	ErrorRequestCount     *aiperfMetric `json:"error_request_count"`
	TimeToFirstToken      *aiperfMetric `json:"time_to_first_token"`
	InterTokenLatency     *aiperfMetric `json:"inter_token_latency"`
	RequestLatency        *aiperfMetric `json:"request_latency"`
	OutputTokenThroughput *aiperfMetric `json:"output_token_throughput"`
	Goodput               *aiperfMetric `json:"goodput"`
	BenchmarkDuration     *aiperfMetric `json:"benchmark_duration"`
	ErrorSummary          []struct {
		Details struct {
			Code *int   `json:"code"`
			Type string `json:"type"`
		} `json:"error_details"`
		Count int `json:"count"`
	} `json:"error_summary"`
	StartTime string `json:"start_time"`
	EndTime   string `json:"end_time"`
}

// unitSeconds is how many seconds one unit of an AIPerf or llm-d
// latency is; false for a unit that is not a time.
func unitSeconds(u string) (float64, bool) {
	switch u {
	case "s", "sec", "s/token":
		return 1, true
	case "ms", "ms/token":
		return 1e-3, true
	case "us", "µs":
		return 1e-6, true
	case "ns":
		return 1e-9, true
	}
	return 0, false
}

func (m *aiperfMetric) dist() Dist {
	if m == nil {
		return Dist{}
	}
	k, ok := unitSeconds(m.Unit)
	if !ok {
		return Dist{}
	}
	return Dist{Mean: scaled(m.Avg, k), P50: scaled(m.P50, k), P90: scaled(m.P90, k), P95: scaled(m.P95, k), P99: scaled(m.P99, k)}
}

func (m *aiperfMetric) avg() *float64 {
	if m == nil {
		return nil
	}
	return m.Avg
}

func readAIPerfProfile(b []byte) (Result, error) {
	var f aiperfProfile
	if err := json.Unmarshal(b, &f); err != nil {
		return Result{}, fmt.Errorf("AIPerf profile export: %w", err)
	}
	if f.RequestCount == nil || f.RequestCount.Avg == nil {
		return Result{}, errors.New("AIPerf profile export without request_count")
	}
	r := Result{Format: AIPerfProfile, Tool: "aiperf", Clock: clockMonotonic,
		Completed:   ptr(int(math.Round(*f.RequestCount.Avg))),
		RequestRate: f.RequestThroughput.avg(), OutputTPS: f.OutputTokenThroughput.avg(), Goodput: f.Goodput.avg(),
		TTFT: f.TimeToFirstToken.dist(), ITL: f.InterTokenLatency.dist(), E2E: f.RequestLatency.dist()}
	if d := f.BenchmarkDuration; d != nil && d.Avg != nil {
		if k, ok := unitSeconds(d.Unit); ok {
			r.Duration = ptr(*d.Avg * k)
		}
	}
	// start_time and end_time are datetime.fromtimestamp(): local time
	// without a zone, so they do not place the run; their difference is
	// its length.
	if r.Duration == nil {
		if a, err1 := time.Parse("2006-01-02T15:04:05.999999", f.StartTime); err1 == nil {
			if z, err2 := time.Parse("2006-01-02T15:04:05.999999", f.EndTime); err2 == nil && z.After(a) {
				r.Duration = ptr(z.Sub(a).Seconds())
			}
		}
	}
	failed := 0
	for _, e := range f.ErrorSummary {
		failed += e.Count
		if r.FailedKind == nil {
			r.FailedKind = map[string]int{}
		}
		kind := e.Details.Type
		if kind == "" && e.Details.Code != nil {
			kind = fmt.Sprintf("HTTP %d", *e.Details.Code)
		}
		r.FailedKind[kind] += e.Count
	}
	switch {
	case f.ErrorRequestCount != nil && f.ErrorRequestCount.Avg != nil:
		r.Failed = ptr(int(math.Round(*f.ErrorRequestCount.Avg)))
	case f.ErrorSummary != nil:
		r.Failed = &failed
	default:
		r.absent("failed", "the export has neither error_request_count nor error_summary")
	}
	if r.Goodput == nil {
		r.absent("goodput_requests_per_second", "aiperf was run without --goodput")
	}
	return r, nil
}

// aiperfRecord is one line of AIPerf's profile_export.jsonl
// (MetricRecordInfo): request times in epoch nanoseconds.
type aiperfRecord struct {
	Metadata struct {
		XRequestID     string `json:"x_request_id"`
		RequestStartNs *int64 `json:"request_start_ns"`
		RequestEndNs   *int64 `json:"request_end_ns"`
		BenchmarkPhase string `json:"benchmark_phase"`
		WasCancelled   bool   `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error *struct {
		Code    *int   `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// seconds is metric name's value in seconds (or tokens for a count).
func (rec *aiperfRecord) value(name string) (float64, bool) {
	m, ok := rec.Metrics[name]
	if !ok {
		return 0, false
	}
	var v float64
	if json.Unmarshal(m.Value, &v) != nil {
		return 0, false
	}
	if k, ok := unitSeconds(m.Unit); ok {
		return v * k, true
	}
	return v, true
}

// readAIPerfRecords computes the summary AIPerf computes from its records:
// counts, the span from the first request's start to the last one's end,
// rates over it, and numpy-style percentiles of the per-request values.
func readAIPerfRecords(lines [][]byte) (Result, error) {
	r := Result{Format: AIPerfRecords, Tool: "aiperf", Clock: clockWall}
	var ttft, itl, e2e []float64
	var first, last int64
	completed, failed, tokens := 0, 0, 0.0
	for i, line := range lines {
		var rec aiperfRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return Result{}, fmt.Errorf("AIPerf records line %d: %w", i+1, err)
		}
		md := rec.Metadata
		if md.RequestStartNs == nil || md.RequestEndNs == nil {
			return Result{}, fmt.Errorf("AIPerf records line %d: no request_start_ns or request_end_ns", i+1)
		}
		if md.BenchmarkPhase != "" && md.BenchmarkPhase != "profiling" {
			continue // warm-up requests are not in AIPerf's figures
		}
		if first == 0 || *md.RequestStartNs < first {
			first = *md.RequestStartNs
		}
		last = max(last, *md.RequestEndNs)
		q := Request{ID: md.XRequestID, Start: float64(*md.RequestStartNs) / 1e9,
			E2E: float64(*md.RequestEndNs-*md.RequestStartNs) / 1e9, OK: rec.Error == nil}
		if rec.Error != nil {
			failed++
			kind := rec.Error.Type
			if kind == "" && rec.Error.Code != nil {
				kind = fmt.Sprintf("HTTP %d", *rec.Error.Code)
			}
			if r.FailedKind == nil {
				r.FailedKind = map[string]int{}
			}
			r.FailedKind[kind]++
			q.Error = rec.Error.Message
			r.Requests = append(r.Requests, q)
			continue
		}
		completed++
		if v, ok := rec.value("time_to_first_token"); ok {
			ttft, q.TTFT = append(ttft, v), v
		}
		if v, ok := rec.value("inter_token_latency"); ok {
			itl = append(itl, v)
		}
		if v, ok := rec.value("request_latency"); ok {
			e2e, q.E2E = append(e2e, v), v
		}
		if v, ok := rec.value("output_sequence_length"); ok {
			tokens += v
			q.OutputTokens = int(v)
		}
		r.Requests = append(r.Requests, q)
	}
	if len(r.Requests) == 0 {
		return Result{}, errors.New("AIPerf records: no profiling record")
	}
	r.Completed, r.Failed = &completed, &failed
	r.Start, r.End = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
	if d := float64(last-first) / 1e9; d > 0 {
		r.Duration = &d
		r.RequestRate = ptr(float64(completed) / d)
		r.OutputTPS = ptr(tokens / d)
	}
	r.TTFT, r.ITL, r.E2E = summarize(ttft), summarize(itl), summarize(e2e)
	r.absent("goodput_requests_per_second", "per-request records carry no SLO verdict")
	return r, nil
}

// summarize is xs's mean and numpy-style percentiles.
func summarize(xs []float64) Dist {
	return Dist{Mean: Mean(xs), P50: Quantile(xs, 0.5), P90: Quantile(xs, 0.9), P95: Quantile(xs, 0.95), P99: Quantile(xs, 0.99)}
}
