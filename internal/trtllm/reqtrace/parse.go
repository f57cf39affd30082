package reqtrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrUnrecognized is returned for valid JSON that is not a perf-metrics
// record (for example an iteration-stats line fed in by mistake).
var ErrUnrecognized = errors.New("not a TensorRT-LLM perf-metrics record")

// wirePhase is WorkerPerfMetrics (docs/trtllm.md#disaggregated-record), also
// the top level of a worker line (docs/trtllm.md#worker-record). Ids stay raw so they never pass through float64.
type wirePhase struct {
	RequestID    json.RawMessage `json:"request_id"`
	CtxRequestID json.RawMessage `json:"ctx_request_id"`
	PerfMetrics  *struct {
		TimingMetrics *Timing `json:"timing_metrics"`
	} `json:"perf_metrics"`
}

// wireLine is the union of every top-level shape: a disagg record or a worker
// record, of any generation (docs/trtllm.md#per-request-perf-metrics-records).
type wireLine struct {
	wirePhase
	Status           *string         `json:"status"`
	DisaggRequestID  json.RawMessage `json:"disagg_request_id"`
	CtxServer        *string         `json:"ctx_server"`
	GenServer        *string         `json:"gen_server"`
	DisaggArrival    *float64        `json:"disagg_server_arrival_time"`
	DisaggDispatch   float64         `json:"disagg_ctx_dispatch_time"`
	DisaggFirstToken float64         `json:"disagg_server_first_token_time"`
	// An early generation-A variant spelled the first-token key "_ts".
	DisaggFirstTokenTS float64    `json:"disagg_server_first_token_ts"`
	CtxPerf            *wirePhase `json:"ctx_perf_metrics"`
	GenPerf            *wirePhase `json:"gen_perf_metrics"`
}

// ParseLine parses one line of input. A line is normally one JSON object;
// a JSON array of objects (a saved generation-A GET /perf_metrics response)
// yields one record per element. Blank lines yield nothing.
func ParseLine(line []byte, pos Pos) ([]Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if line[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(line, &items); err != nil {
			return nil, fmt.Errorf("decode array: %w", err)
		}
		out := make([]Record, 0, len(items))
		for i, it := range items {
			r, err := parseObject(it, pos)
			if err != nil {
				return nil, fmt.Errorf("array element %d: %w", i, err)
			}
			out = append(out, r)
		}
		return out, nil
	}
	r, err := parseObject(line, pos)
	if err != nil {
		return nil, err
	}
	return []Record{r}, nil
}

func parseObject(b []byte, pos Pos) (Record, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Record{}, fmt.Errorf("%w: not a JSON object", ErrUnrecognized)
	}
	var w wireLine
	if err := json.Unmarshal(b, &w); err != nil {
		return Record{}, fmt.Errorf("decode: %w", err)
	}
	isDisagg := w.DisaggArrival != nil || w.CtxServer != nil || w.GenServer != nil ||
		w.CtxPerf != nil || w.GenPerf != nil
	switch {
	case isDisagg:
		return disaggRecord(&w, pos)
	case w.PerfMetrics != nil:
		return workerRecord(&w, pos)
	}
	return Record{}, ErrUnrecognized
}

func disaggRecord(w *wireLine, pos Pos) (Record, error) {
	r := Record{Pos: pos, Kind: KindDisagg}
	if w.DisaggArrival != nil {
		r.DisaggArrival = clean(*w.DisaggArrival)
	}
	r.DisaggDispatch = clean(w.DisaggDispatch)
	r.DisaggFirstToken = clean(w.DisaggFirstToken)
	if r.DisaggFirstToken == 0 {
		r.DisaggFirstToken = clean(w.DisaggFirstTokenTS)
	}
	r.Ctx = phaseOf(w.CtxPerf, w.CtxServer)
	r.GenPhase = phaseOf(w.GenPerf, w.GenServer)

	// Id preference: the disagg snowflake (B/C), then the ctx worker's id,
	// which generation A uses to join ctx and gen items.
	for _, raw := range []json.RawMessage{w.DisaggRequestID, idOf(w.CtxPerf), ctxIDOf(w.GenPerf), idOf(w.GenPerf)} {
		id, err := ParseID(raw)
		if err != nil {
			return Record{}, err
		}
		if id != "" {
			r.ID = id
			break
		}
	}
	// Validate the remaining ids too: a corrupt id is a corrupt line.
	for _, p := range []*wirePhase{w.CtxPerf, w.GenPerf} {
		if p == nil {
			continue
		}
		if _, err := ParseID(p.RequestID); err != nil {
			return Record{}, err
		}
		if _, err := ParseID(p.CtxRequestID); err != nil {
			return Record{}, err
		}
	}

	switch {
	case w.Status == nil:
		r.Gen = GenA
	case carriesCTimes(r.Ctx.Timing) || carriesCTimes(r.GenPhase.Timing):
		r.Gen = GenC
	default:
		r.Gen = GenB
	}
	return r, nil
}

func workerRecord(w *wireLine, pos Pos) (Record, error) {
	r := Record{Pos: pos, Kind: KindWorker, Gen: GenA}
	if w.Status != nil {
		r.Gen = GenBC
	}
	for _, raw := range []json.RawMessage{w.DisaggRequestID, w.RequestID} {
		id, err := ParseID(raw)
		if err != nil {
			return Record{}, err
		}
		if r.ID == "" {
			r.ID = id
		}
	}
	if _, err := ParseID(w.CtxRequestID); err != nil {
		return Record{}, err
	}
	r.Worker = phaseOf(&w.wirePhase, nil)
	return r, nil
}

// carriesCTimes tells generation C from B: B's header-derived phases lost
// the server and KV timestamps (docs/trtllm.md#header-derived-phases).
func carriesCTimes(t Timing) bool {
	return t.ServerArrival != 0 || t.ServerFirstToken != 0 || t.KVStart != 0 || t.KVEnd != 0
}

func idOf(p *wirePhase) json.RawMessage {
	if p == nil {
		return nil
	}
	return p.RequestID
}

func ctxIDOf(p *wirePhase) json.RawMessage {
	if p == nil {
		return nil
	}
	return p.CtxRequestID
}

func phaseOf(p *wirePhase, server *string) Phase {
	var ph Phase
	if server != nil {
		ph.Server = NormalizeServer(*server)
	}
	if p == nil || p.PerfMetrics == nil || p.PerfMetrics.TimingMetrics == nil {
		return ph
	}
	ph.Present = true
	t := *p.PerfMetrics.TimingMetrics
	for _, f := range t.fields() {
		*f = clean(*f)
	}
	ph.Timing = t
	return ph
}

func (t *Timing) fields() [8]*float64 {
	return [8]*float64{&t.ServerArrival, &t.Arrival, &t.FirstScheduled, &t.FirstToken,
		&t.ServerFirstToken, &t.LastToken, &t.KVStart, &t.KVEnd}
}

// clean maps "not recorded" (≤ 0, TensorRT-LLM's _as_seconds rule) to 0.
func clean(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// NormalizeServer strips the scheme and a trailing slash so generation A's
// "http://host:port" and B/C's "host:port" name the same worker.
func NormalizeServer(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	return strings.TrimRight(s, "/")
}
