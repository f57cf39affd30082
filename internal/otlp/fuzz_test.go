package otlp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ptdmon/ptdmon/internal/journey"
)

// FuzzReceive feeds arbitrary bodies, as protobuf and as JSON, through
// the receiver into a ledger: no panic, and only OTLP's answers.
func FuzzReceive(f *testing.F) {
	valid, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(traces(3))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid, true)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","traceId":"0102030405060708090a0b0c0d0e0f10","attributes":[{"key":"gen_ai.latency.time_to_first_token","value":{"doubleValue":-1}}]}]}]}]}`), false)
	f.Add([]byte("\x0a\x05\x0a\x03\x0a\x01"), true)
	f.Fuzz(func(t *testing.T, body []byte, protobuf bool) {
		l := journey.NewBook(100)
		r := New(Config{MaxBytes: 1 << 16, MaxSpans: 50}, func(td ptrace.Traces) { l.Add(journey.Extract(td)) }, nil)
		ct := ctJSON
		if protobuf {
			ct = ctProtobuf
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d", w.Code)
		}
		if w.Code != http.StatusOK && l.Stats().Legs+l.Stats().Ignored != 0 {
			t.Fatalf("a refused export reached the ledger")
		}
		_ = l.Records()
	})
}
