// Package scrape fetches one target's /metrics over HTTP with a deadline and
// a size limit, and stamps the result with the time the sample describes.
package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/ptdmon/ptdmon/internal/buildinfo"
)

// Accept prefers the text format (its parser is the fastest) and takes
// OpenMetrics when that is all a target offers.
const Accept = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// DefaultMaxBodyBytes bounds a decompressed body.
const DefaultMaxBodyBytes = 64 << 20

// Result is one fetched body. Body is owned by the Fetcher and valid until
// its next Fetch or Release.
type Result struct {
	Body        []byte
	ContentType string
	// Time is the midpoint of request start and response end: the instant
	// the sample describes. It carries the monotonic clock reading, so
	// differences between two Results are immune to wall-clock steps.
	Time     time.Time
	Duration time.Duration
}

// Fetcher fetches one target repeatedly, reusing its buffer.
type Fetcher struct {
	URL          string
	Client       *http.Client
	Timeout      time.Duration
	MaxBodyBytes int64
	// Budget, if set, is shared by every target's Fetcher: the bytes of
	// bodies in flight beyond FreeBytes each are drawn from it.
	Budget *Budget
	body   body
	prep   prepared
}

// prepared is what a Fetcher's requests repeat from fetch to fetch: made
// once, not per scrape, as canonicalizing header keys and parsing the URL
// for its redacted form cost as much as a small body's read.
type prepared struct {
	url, shown string
	timeout    time.Duration
	// header is shared by the requests and never changed: Client and
	// Transport do not modify a request's header (http.RoundTripper).
	header http.Header
}

// prepare returns the parts of the next request, made again only when the
// URL or the timeout changed.
func (f *Fetcher) prepare() *prepared {
	if p := &f.prep; p.header != nil && p.url == f.URL && p.timeout == f.Timeout {
		return p
	}
	h := http.Header{"Accept": {Accept}, "User-Agent": {buildinfo.UserAgent()}}
	if f.Timeout > 0 {
		// As Prometheus sends it, so an exporter can bound its own work.
		h["X-Prometheus-Scrape-Timeout-Seconds"] = []string{strconv.FormatFloat(f.Timeout.Seconds(), 'f', -1, 64)}
	}
	f.prep = prepared{url: f.URL, shown: Redact(f.URL), timeout: f.Timeout, header: h}
	return &f.prep
}

// Fetch performs one scrape. Errors are *Error; their texts name the URL
// with its password redacted and never carry the response body.
func (f *Fetcher) Fetch(ctx context.Context) (Result, error) {
	f.Release()
	f.body.budget = f.Budget
	limit := f.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if f.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.Timeout)
		defer cancel()
	}
	prep := f.prepare()
	shown := prep.shown
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return Result{}, &Error{ReasonConnect, fmt.Errorf("build request for %s: %w", shown, err)}
	}
	req.Header = prep.header
	start := time.Now()
	resp, err := f.Client.Do(req)
	if err != nil {
		return Result{}, classify(fmt.Errorf("GET %s: %w", shown, unwrapURL(err)), ReasonConnect)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // drained for reuse; the status is the error
		return Result{}, &Error{ReasonHTTP, fmt.Errorf("GET %s: HTTP status %s", shown, resp.Status)}
	}
	n, err := f.body.readFrom(resp.Body, limit, resp.ContentLength)
	end := time.Now()
	switch {
	case errors.Is(err, errTooLarge):
		f.Release()
		return Result{}, &Error{ReasonTooLarge, fmt.Errorf("GET %s: body exceeds the %d-byte limit", shown, limit)}
	case errors.Is(err, errBudget):
		f.Release()
		return Result{}, &Error{ReasonBudget, fmt.Errorf("GET %s: body of more than %d bytes: %w", shown, n, err)}
	case err != nil:
		f.Release()
		// Past the headers, what is not a timeout is a broken body
		// (a cut connection, invalid gzip).
		return Result{}, classify(fmt.Errorf("GET %s: reading body after %d bytes: %w", shown, n, err), ReasonRead)
	}
	return Result{
		Body:        f.body.buf,
		ContentType: resp.Header.Get("Content-Type"),
		Time:        start.Add(end.Sub(start) / 2),
		Duration:    end.Sub(start),
	}, nil
}

// Release gives the last body's buffer back to the pool and its bytes back
// to the budget; the Result's Body must not be used after it.
func (f *Fetcher) Release() { f.body.release() }

// unwrapURL drops the *url.Error wrapper: its text repeats the URL, which
// the caller names redacted.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// classify finds the class of err, or gives it other.
func classify(err error, other Reason) error {
	var ne net.Error
	switch {
	case errors.Is(err, errRedirectLoop):
		return &Error{ReasonRedirectLoop, err}
	case errors.Is(err, errRedirectHost):
		return &Error{ReasonRedirect, err}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return &Error{ReasonTimeout, err}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Error{ReasonRefused, err}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{ReasonRead, err}
	}
	return &Error{other, err}
}

// Redact returns raw with the password of its userinfo replaced, for every
// place a target URL is shown.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if _, has := u.User.Password(); !has {
		return raw
	}
	return u.Redacted()
}
