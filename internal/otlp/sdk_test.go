package otlp_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/otlp"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// truth is one disaggregated request's timeline as the two vLLM engines
// live it; the spans carry what vLLM's do_tracing computes from it.
type truth struct {
	arrive                          time.Time // at the prefill engine
	preP, queueP, prefillP, finishP time.Duration
	proxy                           time.Duration // prefill leg's end → decode leg's arrival
	preD, waitD, stepD, decodeD     time.Duration // waitD: queue on decode, the wait for remote KV included
	prompt, completion              int64
	kv                              *[2]time.Duration // a KV-transfer span, offsets after the decode leg's arrival
}

func (t truth) prefillEnd() time.Time {
	return t.arrive.Add(t.preP + t.queueP + t.prefillP + t.finishP)
}
func (t truth) decodeArrive() time.Time { return t.prefillEnd().Add(t.proxy) }
func (t truth) decodeSched() time.Time  { return t.decodeArrive().Add(t.preD + t.waitD) }

// phases are the true durations in seconds, read off the timeline.
func (t truth) phases() map[journey.Phase]float64 {
	m := map[journey.Phase]float64{
		journey.PhaseQueue:   t.queueP.Seconds(),
		journey.PhasePrefill: t.prefillP.Seconds(),
		journey.PhaseDecode:  (t.stepD + t.decodeD).Seconds(),
	}
	if t.kv == nil {
		m[journey.PhaseKVTransfer] = t.decodeSched().Sub(t.prefillEnd()).Seconds()
	} else {
		k0, k1 := t.decodeArrive().Add(t.kv[0]), t.decodeArrive().Add(t.kv[1])
		m[journey.PhaseKVTransfer] = k1.Sub(k0).Seconds()
		q0, q1 := t.decodeArrive().Add(t.preD), t.decodeSched()
		lo, hi := max(q0.UnixNano(), k0.UnixNano()), min(q1.UnixNano(), k1.UnixNano())
		m[journey.PhaseDecodeQueue] = (t.waitD - time.Duration(max(0, hi-lo))).Seconds()
	}
	return m
}

// emit writes the two llm_request spans (and the KV span) of t into one
// trace, as a P/D proxy forwarding traceparent makes them.
func emit(t truth, prefill, decode trace.Tracer, tid trace.TraceID, proxySpan trace.SpanID) {
	parent := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: proxySpan, TraceFlags: trace.FlagsSampled, Remote: true}))
	id := fmt.Sprintf("cmpl-%s", tid.String()[:8])
	leg := func(tr trace.Tracer, start, end time.Time, queue, ttft, prefill, decode time.Duration, maxTokens, completion int64) {
		_, s := tr.Start(parent, journey.SpanLLMRequest, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
			trace.WithAttributes(
				attribute.String(journey.AttrRequestID, id),
				attribute.Int64(journey.AttrMaxTokens, maxTokens),
				attribute.Int64(journey.AttrPromptTokens, t.prompt),
				attribute.Int64(journey.AttrCompletionTokens, completion),
				attribute.Float64(journey.AttrQueue, queue.Seconds()),
				attribute.Float64(journey.AttrTTFT, ttft.Seconds()),
				attribute.Float64(journey.AttrPrefill, prefill.Seconds()),
				attribute.Float64(journey.AttrDecode, decode.Seconds()),
				attribute.Float64(journey.AttrE2E, end.Sub(start).Seconds()),
			))
		s.End(trace.WithTimestamp(end))
	}
	// The prefill leg: max_tokens 1, its one token at the end of prefill.
	leg(prefill, t.arrive, t.prefillEnd(), t.queueP, t.preP+t.queueP+t.prefillP, t.prefillP, 0, 1, 1)
	// The decode leg: its queue holds the wait for the remote KV.
	da := t.decodeArrive()
	dEnd := t.decodeSched().Add(t.stepD + t.decodeD + time.Millisecond)
	leg(decode, da, dEnd, t.waitD, t.preD+t.waitD+t.stepD, t.stepD, t.decodeD, 256, t.completion)
	if t.kv != nil {
		_, s := decode.Start(parent, journey.SpanKVTransfer, trace.WithTimestamp(da.Add(t.kv[0])))
		s.End(trace.WithTimestamp(da.Add(t.kv[1])))
	}
}

func provider(t *testing.T, exp sdktrace.SpanExporter, service, instance string) *sdktrace.TracerProvider {
	t.Helper()
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service), semconv.ServiceInstanceID(instance))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
}

func startReceiver(t *testing.T, cfg otlp.Config, l *journey.Book) (*otlp.Receiver, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := otlp.New(cfg, func(td ptrace.Traces) { l.Add(journey.Extract(td)) }, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return r, ln.Addr().String()
}

// TestSDKJoinsTruth sends vLLM-shaped spans with the OpenTelemetry Go SDK
// over gRPC and over HTTP and checks the joined phases against the
// timelines they were made from.
func TestSDKJoinsTruth(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	var cases []truth
	for i := range 40 {
		f := float64(i)
		tr := truth{
			arrive: t0.Add(time.Duration(i) * 37 * time.Millisecond),
			preP:   ms(1.5), queueP: ms(3 + 7*f), prefillP: ms(80 + 13*f), finishP: ms(0.4),
			proxy: ms(2.2), preD: ms(0.9), waitD: ms(40 + 29*math.Mod(f, 5)), stepD: ms(9), decodeD: ms(900 + 11*f),
			prompt: 4096 + int64(i), completion: 200 + int64(i),
		}
		if i%4 == 3 {
			tr.kv = &[2]time.Duration{tr.preD + ms(5), tr.preD + tr.waitD - ms(3)}
		}
		cases = append(cases, tr)
	}
	for _, proto := range []string{"grpc", "http", "grpc+gzip", "http+gzip"} {
		t.Run(proto, func(t *testing.T) {
			l := journey.NewBook(0)
			_, addr := startReceiver(t, otlp.Config{}, l)
			ctx := context.Background()
			exporter := func() sdktrace.SpanExporter {
				var exp sdktrace.SpanExporter
				var err error
				switch proto {
				case "grpc":
					exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure())
				case "grpc+gzip":
					exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure(), otlptracegrpc.WithCompressor("gzip"))
				case "http":
					exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
				default:
					exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure(), otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
				}
				if err != nil {
					t.Fatal(err)
				}
				return exp
			}
			p := provider(t, exporter(), "vllm-prefill", "p0")
			d := provider(t, exporter(), "vllm-decode", "d0")
			want := map[string]truth{}
			for i, tr := range cases {
				tid := trace.TraceID{0xa, byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, byte(len(proto))}
				emit(tr, p.Tracer("vllm"), d.Tracer("vllm"), tid, trace.SpanID{1, byte(i), 3, 4, 5, 6, 7, 8})
				want[tid.String()] = tr
			}
			// Decode legs may arrive before their prefill legs: flush decode first.
			if err := d.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := p.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() (bool, string) {
				n := l.Stats().Joined
				return n == int64(len(cases)), fmt.Sprintf("%d of %d requests joined", n, len(cases))
			})
			recs := l.Records()
			if len(recs) != len(cases) {
				t.Fatalf("%d records, want %d", len(recs), len(cases))
			}
			for _, r := range recs {
				tr, ok := want[r.TraceID]
				if !ok {
					t.Fatalf("record of unknown trace %s", r.TraceID)
				}
				if !r.Complete() || r.PrefillInstance != "p0" || r.DecodeInstance != "d0" {
					t.Errorf("%s: legs %q, instances %q/%q", r.ID, r.Legs, r.PrefillInstance, r.DecodeInstance)
				}
				for ph, w := range tr.phases() {
					got, ok := r.Phase(ph)
					if !ok || math.Abs(got-w) > 1e-3 {
						t.Errorf("%s %s = %v (known %v), want %v; absent: %v", r.ID, ph, got, ok, w, r.Absent[ph])
					}
				}
				wantTTFT := tr.decodeSched().Add(tr.stepD).Sub(tr.arrive).Seconds()
				if math.Abs(r.TTFT-wantTTFT) > 1e-3 {
					t.Errorf("%s TTFT %v, want %v", r.ID, r.TTFT, wantTTFT)
				}
				if r.PromptTokens != tr.prompt || r.CompletionTokens != tr.completion {
					t.Errorf("%s tokens %d/%d, want %d/%d", r.ID, r.PromptTokens, r.CompletionTokens, tr.prompt, tr.completion)
				}
				inferred := false
				for _, iv := range r.Waterfall {
					if iv.Phase == journey.PhaseKVTransfer {
						inferred = iv.Inferred
					}
				}
				if inferred != (tr.kv == nil) {
					t.Errorf("%s: KV transfer inferred %v with KV span %v", r.ID, inferred, tr.kv != nil)
				}
			}
		})
	}
}
