package reqfeed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestStalledServer: a server that accepts and never answers neither stops
// the polling for good nor blocks the counts /metrics reads.
func TestStalledServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	p := &Poller{URL: srv.URL + "/perf_metrics", Client: srv.Client(), Book: journey.NewBook(0)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx, 100*time.Millisecond) }()
	defer func() { cancel(); <-done }()

	// Stats answers while a poll is stuck in its request.
	testutil.Eventually(t, 2*time.Second, 20*time.Millisecond, func() (bool, string) {
		got := make(chan Stats, 1)
		go func() { got <- p.Stats() }()
		select {
		case st := <-got:
			return st.Polls >= 1, "no poll started yet"
		case <-time.After(time.Second):
			t.Fatal("Stats waits on a poll stuck in its request")
			return false, ""
		}
	})
	// The stuck poll is given up and the next one starts.
	testutil.Eventually(t, 15*time.Second, 100*time.Millisecond, func() (bool, string) {
		st := p.Stats()
		return st.Polls >= 2 && st.Errors >= 1, "the first poll is still waiting for the server"
	})
}
