package reqtrace

import (
	"encoding/json"
	"fmt"
	"io"
)

// The JSON shapes are separate from the internal types so the output
// contract is explicit: ids are strings (exact for 64-bit values), known
// spans are numbers in seconds, missing spans appear only under "missing"
// with their reason.

type jsonReport struct {
	Inputs       []InputSummary  `json:"inputs"`
	Skipped      []jsonSkipped   `json:"skipped_lines"`
	Formats      map[string]int  `json:"formats"`
	Clocks       []ClockEstimate `json:"clock_sync"`
	Reference    string          `json:"reference_clock,omitempty"`
	Unprobed     []string        `json:"unprobed_servers"`
	Duplicates   int             `json:"duplicates"`
	Covered      int             `json:"covered_worker_records"`
	ClockBroken  int             `json:"clock_chain_broken"`
	RequestCount int             `json:"request_count"`
	Phases       []jsonDist      `json:"phases"`
	Shares       []Share         `json:"share_of_e2e"`
	Slowest      []jsonRequest   `json:"slowest"`
	Requests     []jsonRequest   `json:"requests"`
}

type jsonSkipped struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Error string `json:"error"`
}

type jsonDist struct {
	Phase     string        `json:"phase"`
	Count     int           `json:"count"`
	Missing   int           `json:"missing"`
	MissingBy []ReasonCount `json:"missing_by_reason"`
	// Pointers: an empty distribution has no percentiles, not zeros.
	P50  *float64 `json:"p50_seconds"`
	P90  *float64 `json:"p90_seconds"`
	P99  *float64 `json:"p99_seconds"`
	Min  *float64 `json:"min_seconds"`
	Max  *float64 `json:"max_seconds"`
	Mean *float64 `json:"mean_seconds"`
}

type jsonRequest struct {
	ID           string             `json:"id"`
	Source       string             `json:"source"`
	Kind         string             `json:"kind"`
	Generation   string             `json:"generation"`
	CtxServer    string             `json:"ctx_server,omitempty"`
	GenServer    string             `json:"gen_server,omitempty"`
	CtxAligned   bool               `json:"ctx_aligned"`
	GenAligned   bool               `json:"gen_aligned"`
	OutputTokens *int64             `json:"output_tokens,omitempty"`
	Spans        map[string]float64 `json:"spans_seconds"`
	Missing      map[string]string  `json:"missing,omitempty"`
	Violations   []Violation        `json:"chain_violations,omitempty"`
}

func toJSONRequest(q *Request) jsonRequest {
	j := jsonRequest{ID: string(q.ID), Source: q.Pos.String(), Kind: q.Kind.String(), Generation: string(q.Gen),
		CtxServer: q.CtxServer, GenServer: q.GenServer, CtxAligned: q.CtxAligned, GenAligned: q.GenAligned,
		Spans: map[string]float64{}, Violations: q.Violations}
	if q.OutputTokens >= 0 {
		t := q.OutputTokens
		j.OutputTokens = &t
	}
	for s := Span(0); s < NumSpans; s++ {
		v := q.Spans[s]
		if v.OK {
			j.Spans[s.String()] = v.Seconds
			continue
		}
		if j.Missing == nil {
			j.Missing = map[string]string{}
		}
		j.Missing[s.String()] = v.Reason
	}
	return j
}

// WriteJSON renders the report, including every request, as one JSON
// document.
func WriteJSON(w io.Writer, rep *Report) error {
	j := jsonReport{Inputs: rep.Inputs, Formats: rep.Formats, Unprobed: rep.Unprobed,
		Duplicates: rep.Duplicates, Covered: rep.Covered, ClockBroken: rep.ClockBroken,
		RequestCount: len(rep.Requests), Shares: rep.Shares,
		Skipped: []jsonSkipped{}, Clocks: []ClockEstimate{}, Slowest: []jsonRequest{}}
	if j.Unprobed == nil {
		j.Unprobed = []string{}
	}
	if rep.Clocks != nil {
		j.Clocks, j.Reference = rep.Clocks.Estimates, rep.Clocks.Reference
	}
	for _, e := range rep.Skipped {
		j.Skipped = append(j.Skipped, jsonSkipped{e.Pos.File, e.Pos.Line, e.Err.Error()})
	}
	for _, d := range rep.Dist {
		jd := jsonDist{Phase: d.Span.String(), Count: d.Count, Missing: d.Missing, MissingBy: d.MissingBy}
		if jd.MissingBy == nil {
			jd.MissingBy = []ReasonCount{}
		}
		if d.Count > 0 {
			jd.P50, jd.P90, jd.P99, jd.Min, jd.Max, jd.Mean = &d.P50, &d.P90, &d.P99, &d.Min, &d.Max, &d.Mean
		}
		j.Phases = append(j.Phases, jd)
	}
	for i := range rep.Slowest {
		j.Slowest = append(j.Slowest, toJSONRequest(&rep.Slowest[i]))
	}
	j.Requests = make([]jsonRequest, 0, len(rep.Requests))
	for i := range rep.Requests {
		j.Requests = append(j.Requests, toJSONRequest(&rep.Requests[i]))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(j); err != nil {
		return fmt.Errorf("write JSON report: %w", err)
	}
	return nil
}
