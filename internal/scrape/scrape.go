// Package scrape fetches one target's /metrics over HTTP with a deadline and
// a size limit, and stamps the result with the time the sample describes.
package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// Accept prefers the text format (its parser is the fastest) and takes
// OpenMetrics when that is all a target offers.
const Accept = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// DefaultMaxBodyBytes bounds a decompressed body.
const DefaultMaxBodyBytes = 64 << 20

// Failure classes, the reason label of ptd_scrape_failures_total.
const (
	ReasonRefused  = "refused"
	ReasonTimeout  = "timeout"
	ReasonHTTP     = "http_status"
	ReasonTooLarge = "body_too_large"
	ReasonRead     = "read"
	ReasonConnect  = "connect"
)

// Result is one fetched body. Body is owned by the Fetcher and valid until
// its next Fetch.
type Result struct {
	Body        []byte
	ContentType string
	// Time is the midpoint of request start and response end: the instant
	// the sample describes. It carries the monotonic clock reading, so
	// differences between two Results are immune to wall-clock steps.
	Time     time.Time
	Duration time.Duration
}

// Error is a failed fetch with its class.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Fetcher fetches one target repeatedly, reusing its buffer.
type Fetcher struct {
	URL          string
	Client       *http.Client
	Timeout      time.Duration
	MaxBodyBytes int64
	buf          bytes.Buffer
}

// Fetch performs one scrape.
func (f *Fetcher) Fetch(ctx context.Context) (Result, error) {
	limit := f.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if f.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return Result{}, &Error{ReasonConnect, fmt.Errorf("build request for %s: %w", f.URL, err)}
	}
	req.Header.Set("Accept", Accept)
	req.Header.Set("User-Agent", "ptdmon")
	start := time.Now()
	resp, err := f.Client.Do(req)
	if err != nil {
		return Result{}, classify(fmt.Errorf("GET %s: %w", f.URL, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return Result{}, &Error{ReasonHTTP, fmt.Errorf("GET %s: HTTP status %s", f.URL, resp.Status)}
	}
	f.buf.Reset()
	n, err := f.buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
	end := time.Now()
	if err != nil {
		return Result{}, classify(fmt.Errorf("GET %s: reading body after %d bytes: %w", f.URL, n, err))
	}
	if n > limit {
		// Give the oversized buffer back; the connection closes with the body.
		f.buf = bytes.Buffer{}
		return Result{}, &Error{ReasonTooLarge, fmt.Errorf("GET %s: body exceeds the %d-byte limit", f.URL, limit)}
	}
	if f.buf.Cap() > 4*int(n)+1<<20 {
		// One huge body should not pin its buffer for the target's lifetime.
		defer func() { f.buf = bytes.Buffer{} }()
	}
	return Result{
		Body:        f.buf.Bytes(),
		ContentType: resp.Header.Get("Content-Type"),
		Time:        start.Add(end.Sub(start) / 2),
		Duration:    end.Sub(start),
	}, nil
}

func classify(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return &Error{ReasonTimeout, err}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Error{ReasonRefused, err}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{ReasonRead, err}
	}
	return &Error{ReasonConnect, err}
}

// NewClient returns an HTTP client suited to frequent scrapes of many
// targets: kept-alive connections, no redirects across hosts surprises.
func NewClient(targets int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = targets + 16
	tr.MaxIdleConnsPerHost = 4
	tr.IdleConnTimeout = 90 * time.Second
	tr.Proxy = nil // engines are reached directly; a proxy would skew the sample time
	return &http.Client{Transport: tr}
}
