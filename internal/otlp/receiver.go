package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
)

// Defaults of Config.
const (
	DefaultMaxBytes   = 16 << 20
	DefaultMaxSpans   = 20_000
	DefaultRetryAfter = time.Second
)

// Config bounds a receiver.
type Config struct {
	// MaxBytes bounds the bytes of the payloads being read at once; one
	// payload may be at most this large.
	MaxBytes int64
	// MaxSpans bounds the spans of one export.
	MaxSpans int
	// Forward, if set, is an OTLP/HTTP traces URL
	// (http://tempo:4318/v1/traces) that receives every accepted export.
	Forward string
	// RetryAfter is the delay a retryable refusal asks for.
	RetryAfter time.Duration
}

func (c *Config) setDefaults() {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxSpans <= 0 {
		c.MaxSpans = DefaultMaxSpans
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = DefaultRetryAfter
	}
}

// Consumer takes the traces of one accepted export. It must not keep td
// past its return.
type Consumer func(td ptrace.Traces)

// Stats count what the receiver did.
type Stats struct {
	Exports, Spans, Refused, Invalid, TooLarge int64
	Forwarded, ForwardDropped, ForwardFailed   int64
}

// Receiver is an OTLP trace receiver.
type Receiver struct {
	cfg     Config
	consume Consumer
	log     *slog.Logger
	budget  budget
	grpc    *grpc.Server
	fwd     *forwarder

	exports, spans, refused, invalid, tooLarge atomic.Int64
}

// New returns a receiver that hands every accepted export to consume.
func New(cfg Config, consume Consumer, log *slog.Logger) *Receiver {
	cfg.setDefaults()
	if log == nil {
		log = slog.Default()
	}
	r := &Receiver{cfg: cfg, consume: consume, log: log, budget: budget{max: cfg.MaxBytes}}
	r.grpc = newGRPCServer(r)
	if cfg.Forward != "" {
		r.fwd = newForwarder(cfg.Forward, cfg.MaxBytes, log)
	}
	return r
}

// Stats returns the counts so far.
func (r *Receiver) Stats() Stats {
	s := Stats{Exports: r.exports.Load(), Spans: r.spans.Load(), Refused: r.refused.Load(),
		Invalid: r.invalid.Load(), TooLarge: r.tooLarge.Load()}
	if r.fwd != nil {
		s.Forwarded, s.ForwardDropped, s.ForwardFailed = r.fwd.sent.Load(), r.fwd.dropped.Load(), r.fwd.failed.Load()
	}
	return s
}

// ServeHTTP answers OTLP/gRPC and OTLP/HTTP.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.ProtoMajor == 2 && strings.HasPrefix(req.Header.Get("Content-Type"), "application/grpc") {
		wb := &wireBudget{body: req.Body, r: r}
		defer wb.handOver()
		req.Body = wb
		r.grpc.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), wireBudgetKey{}, wb)))
		return
	}
	if req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	r.serveHTTP(w, req)
}

// Serve answers on ln until ctx ends.
func (r *Receiver) Serve(ctx context.Context, ln net.Listener) error {
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           r,
		Protocols:         &protos,
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(r.log.Handler(), slog.LevelWarn),
	}
	if r.fwd != nil {
		go r.fwd.run(ctx)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		return fmt.Errorf("otlp receiver: %w", err)
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if srv.Shutdown(shut) != nil {
		// Shutdown leaves the exports still being read open past its
		// deadline: close their connections, and so end their handlers.
		_ = srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("otlp receiver: %w", err)
	}
	return nil
}

// outcome is what became of one export.
type outcome int

const (
	accepted outcome = iota
	invalid          // cannot be decoded
	tooLarge         // will never fit the budget
	refused          // does not fit now: retry
)

// accept decodes raw with decode and, when it fits, hands it on. The
// caller has reserved the budget for raw. Nothing is changed unless the
// outcome is accepted.
func (r *Receiver) accept(raw []byte, decode func(ptraceotlp.ExportRequest, []byte) error, protobuf bool) (outcome, error) {
	req := ptraceotlp.NewExportRequest()
	if err := decode(req, raw); err != nil {
		r.invalid.Add(1)
		return invalid, fmt.Errorf("decode the export: %w", err)
	}
	td := req.Traces()
	n := td.SpanCount()
	if n > r.cfg.MaxSpans {
		r.tooLarge.Add(1)
		return tooLarge, fmt.Errorf("%d spans in one export, more than the %d allowed", n, r.cfg.MaxSpans)
	}
	r.consume(td)
	r.exports.Add(1)
	r.spans.Add(int64(n))
	if r.fwd != nil {
		if body, ok := exportProto(req, raw, protobuf); ok {
			r.fwd.send(body)
		}
	}
	return accepted, nil
}

// exportProto is the export as OTLP protobuf: raw itself when it came so,
// else req encoded (decoded data always encodes).
func exportProto(req ptraceotlp.ExportRequest, raw []byte, protobuf bool) ([]byte, bool) {
	if protobuf {
		return raw, true
	}
	b, err := req.MarshalProto()
	return b, err == nil
}
