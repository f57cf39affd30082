package scrape

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

var (
	errRedirectLoop = errors.New("redirect loop")
	errRedirectHost = errors.New("redirect to another host or port not followed (set follow_redirects to allow)")
)

// maxRedirects ends a chain that never revisits a URL but never ends either.
const maxRedirects = 10

// NewClient returns an HTTP client suited to frequent scrapes of many
// targets: kept-alive connections, redirects followed only within the
// target's own scheme, host and port. targets ≤ 0 keeps an idle connection
// to any number of targets: a connection closed for lack of room is dialed
// again on the next scrape, which costs more than the scrape.
func NewClient(targets int) *http.Client { return NewClientFollowing(targets, false) }

// NewClientFollowing is NewClient that, with follow set, also follows
// redirects to other hosts (Prometheus' follow_redirects). Loops are refused
// either way.
func NewClientFollowing(targets int, follow bool) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = targets + 16
	if targets <= 0 {
		tr.MaxIdleConns = 0 // no limit; MaxIdleConnsPerHost bounds each target
	}
	tr.MaxIdleConnsPerHost = 4
	tr.IdleConnTimeout = 90 * time.Second
	tr.Proxy = nil // engines are reached directly; a proxy would skew the sample time
	return &http.Client{Transport: tr, CheckRedirect: checkRedirect(follow)}
}

func checkRedirect(follow bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		to := req.URL.String()
		for _, v := range via {
			if v.URL.String() == to {
				return fmt.Errorf("%w: back to %s", errRedirectLoop, Redact(to))
			}
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("%w: more than %d redirects", errRedirectLoop, maxRedirects)
		}
		first := via[0].URL
		if !follow && (req.URL.Scheme != first.Scheme || req.URL.Host != first.Host) {
			return fmt.Errorf("%w: %s", errRedirectHost, Redact(to))
		}
		return nil
	}
}
