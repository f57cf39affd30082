//go:build unix

package otlp_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/otlp"
)

// batch is one export of n requests' two vLLM legs each, as a
// BatchSpanProcessor would send (its default batch is 512 spans).
func batch(b *testing.B, n int) []byte {
	b.Helper()
	td := ptrace.NewTraces()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, svc := range []string{"vllm-prefill", "vllm-decode"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		rs.Resource().Attributes().PutStr("service.instance.id", svc+"-0")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range n {
			s := spans.AppendEmpty()
			s.SetName(journey.SpanLLMRequest)
			s.SetTraceID([16]byte{byte(i), byte(i >> 8), 7})
			s.SetSpanID([8]byte{byte(i), byte(i >> 8), byte(len(svc))})
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Millisecond)))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(i)*time.Millisecond + 2*time.Second)))
			a := s.Attributes()
			a.PutStr(journey.AttrRequestID, "cmpl-0123456789abcdef")
			max := int64(1)
			if svc == "vllm-decode" {
				max = 256
			}
			a.PutInt(journey.AttrMaxTokens, max)
			a.PutInt(journey.AttrPromptTokens, 4096)
			a.PutInt(journey.AttrCompletionTokens, max)
			a.PutDouble(journey.AttrQueue, 0.012)
			a.PutDouble(journey.AttrTTFT, 0.3)
			a.PutDouble(journey.AttrPrefill, 0.28)
			a.PutDouble(journey.AttrDecode, 1.5)
			a.PutDouble(journey.AttrE2E, 1.9)
			a.PutDouble("gen_ai.latency.time_in_model_inference", 1.78)
			a.PutStr("gen_ai.response.finish_reasons", `["length"]`)
		}
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkReceiveHTTP is the receiver's whole path for one export of 512
// spans (256 requests): the HTTP handler, pdata's decoding, extraction and
// the join into a ledger at its default bound. cpu-ns/span is the process's
// CPU time (user and system, garbage collection included) per span, which
// a shared machine does not inflate as it does wall time; at 2,000 spans/s
// the receiver needs 2,000 × cpu-ns/span of a core.
func BenchmarkReceiveHTTP(b *testing.B) {
	body := batch(b, 256)
	l := journey.NewBook(journey.DefaultMaxSpans)
	r := otlp.New(otlp.Config{}, func(td ptrace.Traces) { l.Add(journey.Extract(td)) }, nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	cpu0 := cpuTime(b)
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*512), "ns/span")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N*512), "cpu-ns/span")
}

// cpuTime is the process's user and system CPU time so far, in ns.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkLedgerFull reports the heap a ledger holds at its default bound
// (heap-B/span), filled through the receiver.
func BenchmarkLedgerFull(b *testing.B) {
	body := batch(b, 256)
	for b.Loop() {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		l := journey.NewBook(journey.DefaultMaxSpans)
		r := otlp.New(otlp.Config{}, func(td ptrace.Traces) { l.Add(journey.Extract(td)) }, nil)
		for range journey.DefaultMaxSpans / 512 {
			req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/x-protobuf")
			r.ServeHTTP(httptest.NewRecorder(), req)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(l.Stats().Legs), "heap-B/span")
		runtime.KeepAlive(l)
	}
}
