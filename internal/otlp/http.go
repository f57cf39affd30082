package otlp

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Content types of OTLP/HTTP (https://opentelemetry.io/docs/specs/otlp/#otlphttp).
const (
	ctProtobuf = "application/x-protobuf"
	ctJSON     = "application/json"
)

// serveHTTP answers POST /v1/traces.
func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST OTLP traces here", http.StatusMethodNotAllowed)
		return
	}
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if ct != ctProtobuf && ct != ctJSON {
		http.Error(w, "Content-Type must be "+ctProtobuf+" or "+ctJSON, http.StatusUnsupportedMediaType)
		return
	}
	protobuf := ct == ctProtobuf
	fail := func(code int, c codes.Code, err error) {
		writeStatus(w, protobuf, code, c, err.Error())
	}
	if req.ContentLength > r.cfg.MaxBytes {
		r.tooLarge.Add(1)
		fail(http.StatusRequestEntityTooLarge, codes.ResourceExhausted,
			fmt.Errorf("body of %d bytes is larger than the %d allowed", req.ContentLength, r.cfg.MaxBytes))
		return
	}
	// Reserve what the body says it holds before reading it; a body of
	// unknown length, or one that inflates, is counted as it is read.
	held := max(req.ContentLength, 0)
	if !r.budget.take(held) {
		r.refuse(w, protobuf)
		return
	}
	br := &budgetReader{b: &r.budget, max: r.cfg.MaxBytes, free: held}
	defer func() { r.budget.give(held + br.took) }()
	raw, err := r.readBody(req, br)
	if err != nil {
		if errors.Is(err, errOverBudget) {
			r.refuse(w, protobuf)
			return
		}
		if errors.Is(err, errTooLarge) {
			r.tooLarge.Add(1)
			fail(http.StatusRequestEntityTooLarge, codes.ResourceExhausted, err)
			return
		}
		r.invalid.Add(1)
		fail(http.StatusBadRequest, codes.InvalidArgument, err)
		return
	}
	decode := func(e ptraceotlp.ExportRequest, b []byte) error { return e.UnmarshalJSON(b) }
	if protobuf {
		decode = func(e ptraceotlp.ExportRequest, b []byte) error { return e.UnmarshalProto(b) }
	}
	switch out, err := r.accept(raw, decode, protobuf); out {
	case invalid:
		fail(http.StatusBadRequest, codes.InvalidArgument, err)
		return
	case tooLarge:
		fail(http.StatusRequestEntityTooLarge, codes.ResourceExhausted, err)
		return
	}
	resp := ptraceotlp.NewExportResponse()
	var body []byte
	if protobuf {
		body, err = resp.MarshalProto()
	} else {
		body, err = resp.MarshalJSON()
	}
	if err != nil {
		body = nil // an empty response encodes to nothing anyway
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

var errTooLarge = errors.New("too large")

// readBody reads the body through br, gunzipping it when so encoded, up
// to MaxBytes.
func (r *Receiver) readBody(req *http.Request, br *budgetReader) ([]byte, error) {
	limit := r.cfg.MaxBytes
	var src io.Reader = req.Body
	switch enc := req.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(io.LimitReader(req.Body, limit+1))
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		src = zr
	default:
		return nil, fmt.Errorf("Content-Encoding %q: want gzip or none", enc)
	}
	var buf bytes.Buffer
	if req.ContentLength > 0 {
		buf.Grow(int(req.ContentLength))
	}
	// br fails a body past limit with errTooLarge.
	br.r = io.LimitReader(src, limit+1)
	if _, err := buf.ReadFrom(br); err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return buf.Bytes(), nil
}

// refuse answers a payload that does not fit now: 503 with Retry-After,
// which OTLP/HTTP clients retry after the delay.
func (r *Receiver) refuse(w http.ResponseWriter, protobuf bool) {
	r.refused.Add(1)
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(r.cfg.RetryAfter.Seconds()))))
	writeStatus(w, protobuf, http.StatusServiceUnavailable, codes.Unavailable, "over the receiver's byte budget; retry later")
}

// writeStatus writes an OTLP/HTTP error: a google.rpc.Status in the
// request's encoding.
func writeStatus(w http.ResponseWriter, protobuf bool, code int, c codes.Code, msg string) {
	st := &spb.Status{Code: int32(c), Message: msg}
	var body []byte
	var err error
	if protobuf {
		w.Header().Set("Content-Type", ctProtobuf)
		body, err = proto.Marshal(st)
	} else {
		w.Header().Set("Content-Type", ctJSON)
		body, err = protojson.Marshal(st)
	}
	if err != nil {
		body = nil
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
