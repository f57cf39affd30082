package tsdbsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// DefaultMaxResponseBytes bounds one query's response body.
const DefaultMaxResponseBytes = 64 << 20

// ErrTooLarge is wrapped by the error of a response past the size limit.
var ErrTooLarge = errors.New("response too large")

// newAPI builds the query API client. The base URL's query parameters are
// sent with every query (Thanos' dedup, for instance); nocache=1 is added
// because VictoriaMetrics otherwise answers queries for the last 30 s
// (-search.latencyOffset) from older data. Other servers ignore it.
func newAPI(base string, client *http.Client, maxBytes int64, read *atomic.Int64) (v1.API, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("source URL %q: %w", base, err)
	}
	q := u.Query()
	if !q.Has("nocache") {
		q.Set("nocache", "1")
	}
	u.RawQuery = q.Encode()
	if client == nil {
		client = &http.Client{}
	}
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	limited := *client
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	limited.Transport = limitTransport{rt: rt, max: maxBytes, read: read}
	c, err := api.NewClient(api.Config{Address: u.String(), Client: &limited})
	if err != nil {
		return nil, fmt.Errorf("source URL %q: %w", base, err)
	}
	return v1.NewAPI(c), nil
}

// limitTransport fails a response whose body exceeds max bytes, so a query
// that selects far more series than expected cannot exhaust memory.
type limitTransport struct {
	rt   http.RoundTripper
	max  int64
	read *atomic.Int64 // bytes of every body read, if set
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, max: t.max, read: t.read}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
	read *atomic.Int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, b.max)
		}
		return b.rc.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.read != nil {
		b.read.Add(int64(n))
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// retry runs one instant query, retrying transient failures with doubling
// back-off until ctx ends. Each attempt is bounded by timeout, also sent to
// the server so that it gives up too.
func retry(ctx context.Context, a v1.API, query string, at time.Time, timeout time.Duration) (model.Matrix, error) {
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		m, err := queryMatrix(ctx, a, query, at, timeout)
		if err == nil {
			return m, nil
		}
		if !transient(err) || ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (after %d attempts)", err, attempt)
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

func queryMatrix(ctx context.Context, a v1.API, query string, at time.Time, timeout time.Duration) (model.Matrix, error) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, _, _, err := a.Query(qctx, query, at, v1.WithTimeout(timeout))
	if err != nil {
		return nil, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query %s: the server answered a %s, want a matrix of raw samples", query, v.Type())
	}
	return m, nil
}

// transient: worth another attempt. Bad queries and oversized answers are not.
func transient(err error) bool {
	if errors.Is(err, ErrTooLarge) {
		return false
	}
	var ae *v1.Error
	if errors.As(err, &ae) {
		return ae.Type != v1.ErrBadData
	}
	return true
}
