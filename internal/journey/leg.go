package journey

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span and attribute names read from vLLM. The span and the gen_ai.* names
// are defined in vllm/tracing/utils.py (SpanAttributes) and set in
// vllm/v1/engine/output_processor.py (do_tracing); docs/engines.md#traces
// pins both to a commit.
const (
	SpanLLMRequest = "llm_request"
	// SpanKVTransfer is the KV-transfer span of vLLM's journey tracing,
	// proposed in vllm-project/vllm PR #44402 (open; the name may change).
	SpanKVTransfer = "vllm_async_kv_transfer"

	AttrRequestID        = "gen_ai.request.id"
	AttrMaxTokens        = "gen_ai.request.max_tokens"
	AttrPromptTokens     = "gen_ai.usage.prompt_tokens"
	AttrCompletionTokens = "gen_ai.usage.completion_tokens"
	AttrQueue            = "gen_ai.latency.time_in_queue"
	AttrTTFT             = "gen_ai.latency.time_to_first_token"
	AttrE2E              = "gen_ai.latency.e2e"
	AttrPrefill          = "gen_ai.latency.time_in_model_prefill"
	AttrDecode           = "gen_ai.latency.time_in_model_decode"
	attrModel            = "gen_ai.response.model"

	// Resource attributes that name where a span came from.
	resServiceName     = "service.name"
	resServiceInstance = "service.instance.id"
	resHostName        = "host.name"
	// resPool groups instances; without it the service name is the pool.
	resPool = "ptdmon.pool"
)

// Leg is one engine's llm_request span: the part of a request that one
// instance served. Durations are seconds; a negative one is unknown.
type Leg struct {
	TraceID   string
	RequestID string
	Pool      string
	Instance  string
	Model     string
	// Start is the request's arrival at this engine (the span's start);
	// End is the span's end, when the engine finished the request.
	Start, End time.Time

	Queue, TTFT, E2E, Prefill, Decode float64
	// MaxTokens, PromptTokens, CompletionTokens: -1 when unknown.
	MaxTokens, PromptTokens, CompletionTokens int64
	// Role is the leg's side when its engine names it (SGLang's root
	// span); empty for vLLM's, whose side max_tokens 1 tells.
	Role string
	// Room pairs the two legs of one request where the engine gives
	// both the same key (SGLang's bootstrap_room); empty otherwise.
	Room string
	// At holds the leg's moments when spans measured them (SGLang's stage
	// slices) rather than the latency attributes; nil for vLLM's.
	At *LegTimes
}

// LegTimes are a leg's moments read from spans; a zero one is unknown.
// Queued and Scheduled begin and end its queue, First is its first token
// (the end of prefill), Last its last.
type LegTimes struct {
	Queued, Scheduled, First, Last time.Time
}

// prefillOnly says whether the leg is the prefill half of a disaggregated
// request: the P/D proxy sends the prefill engine max_tokens 1.
func (l *Leg) prefillOnly() bool {
	if l.Role != "" {
		return l.Role == rolePrefill
	}
	return l.MaxTokens == 1
}

// KVSpan is a KV-transfer span of one trace.
type KVSpan struct {
	TraceID    string
	Instance   string
	Start, End time.Time
}

// Batch is what one OTLP export carried that the book reads.
type Batch struct {
	Legs []Leg
	KV   []KVSpan
	// SGLang holds SGLang's spans, of which the book assembles legs.
	SGLang  []SGLangSpan
	Ignored int // spans of other names
}

// Extract reads the legs and KV-transfer spans of td. It never fails: a
// span without the attributes it needs keeps them unknown.
func Extract(td ptrace.Traces) Batch {
	var b Batch
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource().Attributes()
		pool, inst := origin(res)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				switch s.Name() {
				case SpanLLMRequest:
					b.Legs = append(b.Legs, leg(s, pool, inst))
				case SpanKVTransfer:
					b.KV = append(b.KV, KVSpan{TraceID: traceID(s.TraceID()), Instance: inst,
						Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime()})
				default:
					if sp, ok := sglangSpan(s, pool, inst); ok {
						b.SGLang = append(b.SGLang, sp)
					} else {
						b.Ignored++
					}
				}
			}
		}
	}
	return b
}

func origin(res pcommon.Map) (pool, inst string) {
	svc := str(res, resServiceName)
	pool = str(res, resPool)
	if pool == "" {
		pool = svc
	}
	for _, k := range []string{resServiceInstance, resHostName, resServiceName} {
		if inst = str(res, k); inst != "" {
			break
		}
	}
	return pool, inst
}

func leg(s ptrace.Span, pool, inst string) Leg {
	a := s.Attributes()
	return Leg{
		TraceID:          traceID(s.TraceID()),
		RequestID:        str(a, AttrRequestID),
		Pool:             pool,
		Instance:         inst,
		Model:            str(a, attrModel),
		Start:            s.StartTimestamp().AsTime(),
		End:              s.EndTimestamp().AsTime(),
		Queue:            seconds(a, AttrQueue),
		TTFT:             seconds(a, AttrTTFT),
		E2E:              seconds(a, AttrE2E),
		Prefill:          seconds(a, AttrPrefill),
		Decode:           seconds(a, AttrDecode),
		MaxTokens:        count(a, AttrMaxTokens),
		PromptTokens:     count(a, AttrPromptTokens),
		CompletionTokens: count(a, AttrCompletionTokens),
	}
}

func traceID(id pcommon.TraceID) string {
	if id.IsEmpty() {
		return ""
	}
	return id.String()
}

func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// maxSeconds is the longest duration a time.Duration holds, in seconds.
const maxSeconds = float64(math.MaxInt64 / int64(time.Second))

// seconds reads a duration attribute; absent, non-numeric, negative and
// out-of-range values (beyond what a time.Duration holds) are unknown (-1).
func seconds(m pcommon.Map, k string) float64 {
	v, ok := m.Get(k)
	if !ok {
		return -1
	}
	var f float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		f = v.Double()
	case pcommon.ValueTypeInt:
		f = float64(v.Int())
	default:
		return -1
	}
	if !(f >= 0 && f <= maxSeconds) { // NaN fails both
		return -1
	}
	return f
}

func count(m pcommon.Map, k string) int64 {
	v, ok := m.Get(k)
	if !ok {
		return -1
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		if v.Int() >= 0 {
			return v.Int()
		}
	case pcommon.ValueTypeDouble:
		if f := v.Double(); f >= 0 && f == float64(int64(f)) {
			return int64(f)
		}
	}
	return -1
}
