package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// traces returns an export of n spans.
func traces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		s := ss.AppendEmpty()
		s.SetName("llm_request")
		s.SetTraceID([16]byte{1, byte(i), byte(i >> 8)})
		s.SetSpanID([8]byte{2, byte(i), byte(i >> 8)})
	}
	return td
}

func protoBody(t *testing.T, n int) []byte {
	t.Helper()
	b, err := ptraceotlp.NewExportRequestFromTraces(traces(n)).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type counted struct{ exports, spans atomic.Int64 }

func (c *counted) consume(td ptrace.Traces) { c.exports.Add(1); c.spans.Add(int64(td.SpanCount())) }

func serve(t *testing.T, cfg Config, c *counted) (*Receiver, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := New(cfg, c.consume, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return r, ln.Addr().String()
}

func TestHTTPHostile(t *testing.T) {
	const maxBytes, maxSpans = 4096, 10
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(b)
		_ = w.Close()
		return buf.Bytes()
	}
	f := func(name string, method, ctype, encoding string, body []byte, hold int64, wantCode int, wantStatus codes.Code, wantRetryAfter string) {
		t.Run(name, func(t *testing.T) {
			var c counted
			r, addr := serve(t, Config{MaxBytes: maxBytes, MaxSpans: maxSpans}, &c)
			if hold > 0 && !r.budget.take(hold) {
				t.Fatal("cannot hold the budget")
			}
			req, _ := http.NewRequest(method, "http://"+addr+"/v1/traces", bytes.NewReader(body))
			req.Header.Set("Content-Type", ctype)
			if encoding != "" {
				req.Header.Set("Content-Encoding", encoding)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			if resp.StatusCode != wantCode {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, wantCode, buf.String())
			}
			if got := resp.Header.Get("Retry-After"); got != wantRetryAfter {
				t.Errorf("Retry-After %q, want %q", got, wantRetryAfter)
			}
			if wantCode == http.StatusOK {
				if c.exports.Load() != 1 {
					t.Errorf("%d exports consumed, want 1", c.exports.Load())
				}
				return
			}
			if c.exports.Load() != 0 {
				t.Errorf("a refused export was consumed")
			}
			if wantStatus != codes.OK && ctype == ctProtobuf {
				var st spb.Status
				if err := proto.Unmarshal(buf.Bytes(), &st); err != nil || codes.Code(st.Code) != wantStatus {
					t.Errorf("body status %v (%v), want %v", codes.Code(st.Code), err, wantStatus)
				}
			}
		})
	}
	ok := protoBody(t, 3)
	f("valid protobuf", "POST", ctProtobuf, "", ok, 0, 200, codes.OK, "")
	f("valid gzip", "POST", ctProtobuf, "gzip", gz(ok), 0, 200, codes.OK, "")
	f("valid json", "POST", ctJSON, "", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708"}]}]}]}`), 0, 200, codes.OK, "")
	f("garbage protobuf", "POST", ctProtobuf, "", []byte("\xff\xff\xff\xff garbage"), 0, 400, codes.InvalidArgument, "")
	f("garbage json", "POST", ctJSON, "", []byte(`{"resourceSpans": [`), 0, 400, codes.OK, "")
	f("bad gzip", "POST", ctProtobuf, "gzip", []byte("not gzip"), 0, 400, codes.InvalidArgument, "")
	f("oversized", "POST", ctProtobuf, "", make([]byte, maxBytes+1), 0, 413, codes.ResourceExhausted, "")
	f("gzip bomb", "POST", ctProtobuf, "gzip", gz(make([]byte, 100*maxBytes)), 0, 413, codes.ResourceExhausted, "")
	f("too many spans", "POST", ctProtobuf, "", protoBody(t, maxSpans+1), 0, 413, codes.ResourceExhausted, "")
	f("over the budget now", "POST", ctProtobuf, "", ok, maxBytes-10, 503, codes.Unavailable, "1")
	f("wrong type", "POST", "text/plain", "", ok, 0, 415, codes.OK, "")
	f("GET", "GET", ctProtobuf, "", nil, 0, 405, codes.OK, "")
}

func TestGRPCHostile(t *testing.T) {
	const maxBytes, maxSpans = 4096, 10
	f := func(name string, body []byte, hold int64, want codes.Code, wantRetry bool, opts ...grpc.CallOption) {
		t.Run(name, func(t *testing.T) {
			var c counted
			r, addr := serve(t, Config{MaxBytes: maxBytes, MaxSpans: maxSpans}, &c)
			if hold > 0 && !r.budget.take(hold) {
				t.Fatal("cannot hold the budget")
			}
			conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var resp []byte
			err = conn.Invoke(ctx, "/"+traceService+"/Export", body, &resp, opts...)
			st := status.Convert(err)
			if st.Code() != want {
				t.Fatalf("code %v (%v), want %v", st.Code(), err, want)
			}
			retry := false
			for _, d := range st.Details() {
				if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay().AsDuration() > 0 {
					retry = true
				}
			}
			if retry != wantRetry {
				t.Errorf("RetryInfo %v, want %v", retry, wantRetry)
			}
			wantExports := int64(0)
			if want == codes.OK {
				wantExports = 1
			}
			if c.exports.Load() != wantExports {
				t.Errorf("%d exports consumed, want %d", c.exports.Load(), wantExports)
			}
			// Whatever the request took is given back when it ends.
			testutil.Eventually(t, 2*time.Second, 10*time.Millisecond, func() (bool, string) {
				r.budget.mu.Lock()
				defer r.budget.mu.Unlock()
				return r.budget.used == hold, fmt.Sprintf("budget in use %d after the request, want the %d held", r.budget.used, hold)
			})
		})
	}
	f("valid", protoBody(t, 3), 0, codes.OK, false)
	f("garbage", []byte("\xff\xff\xff\xff garbage"), 0, codes.InvalidArgument, false)
	f("too many spans", protoBody(t, maxSpans+1), 0, codes.ResourceExhausted, false)
	f("oversized", make([]byte, maxBytes+1), 0, codes.ResourceExhausted, false)
	// Refused while grpc-go reads the body, before it holds the message:
	// UNAVAILABLE, which OTLP exporters retry.
	f("over the budget now", protoBody(t, 3), maxBytes-10, codes.Unavailable, false)
	// Fits on the wire compressed, not once inflated: refused after the
	// read, with the delay to retry after.
	body := protoBody(t, maxSpans)
	if wire := len(gzipped(body)) + 5; 2*wire >= len(body) {
		t.Fatalf("test body of %d bytes compresses to %d only", len(body), wire)
	} else {
		room := (wire + len(body)) / 2
		f("over the budget once inflated", body, int64(maxBytes-room), codes.Unavailable, true, grpc.UseCompressor("gzip"))
	}
}

// gzipped is b compressed with gzip.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// TestGRPCWireBudget: the bytes grpc-go reads of a request count against
// the budget as they are read, so a body that does not fit now is refused
// before it is held whole; what was counted is given back.
func TestGRPCWireBudget(t *testing.T) {
	r := New(Config{MaxBytes: 1 << 20}, func(ptrace.Traces) {}, nil)
	if !r.budget.take(1<<20 - 1000) {
		t.Fatal("cannot hold the budget")
	}
	wb := &wireBudget{body: io.NopCloser(iotest.OneByteReader(bytes.NewReader(make([]byte, 100_000)))), r: r}
	read, err := io.Copy(io.Discard, wb)
	if !errors.Is(err, errGRPCOverBudget) {
		t.Fatalf("read %d bytes, err %v; want the budget refusal", read, err)
	}
	if read > 1000 {
		t.Errorf("read %d bytes of the body with 1000 free", read)
	}
	wb.handOver()
	if r.budget.used != 1<<20-1000 {
		t.Errorf("budget in use %d after the hand-over, want the %d held", r.budget.used, 1<<20-1000)
	}
}

// TestForwardUnchanged puts one receiver in front of another and checks
// the second gets the first's exports byte for byte.
func TestForwardUnchanged(t *testing.T) {
	got := make(chan []byte, 4)
	back := http.NewServeMux()
	back.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		got <- buf.Bytes()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: back, ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	var c counted
	_, addr := serve(t, Config{Forward: "http://" + ln.Addr().String() + "/v1/traces"}, &c)
	body := protoBody(t, 5)
	resp, err := http.Post("http://"+addr+"/v1/traces", ctProtobuf, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, body) {
			t.Errorf("forwarded %d bytes differ from the %d received", len(b), len(body))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing forwarded")
	}
}
