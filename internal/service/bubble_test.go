package service

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// memNet is an in-memory network: a RoundTripper that hands each request to
// the handler of its host and returns what the handler wrote. With no
// socket in the way, every wait of a scrape (the engine's response time,
// the scrape timeout, the interval) is a timer that a testing/synctest
// bubble advances in fake time, so the tests that are about time (rates
// over windows, restarts, file_sd re-reads, the all-down
// warning) run in milliseconds and stamp every sample exactly.
type memNet struct {
	mu    sync.Mutex
	hosts map[string]http.Handler
}

func newMemNet() *memNet { return &memNet{hosts: map[string]http.Handler{}} }

// add serves h as host (host:port) and returns the URL of its /metrics.
func (m *memNet) add(host string, h http.Handler) string {
	m.set(host, h)
	return "http://" + host + "/metrics"
}

// set replaces the handler of host; nil refuses connections (an engine that
// is down).
func (m *memNet) set(host string, h http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hosts[host] = h
}

func (m *memNet) RoundTrip(r *http.Request) (*http.Response, error) {
	m.mu.Lock()
	h := m.hosts[r.URL.Host]
	m.mu.Unlock()
	if h == nil {
		// What the kernel answers for a port nobody listens on.
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err // the scrape's deadline passed while the engine answered
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

func (m *memNet) client() *http.Client { return &http.Client{Transport: m} }

// bubbleService is the serve pipeline (scrape loops, ticks, health and
// file_sd watchers) started inside a synctest bubble, scraping the engines
// of a memNet; its API is answered in memory too.
type bubbleService struct {
	base string       // the API's URL on its own memNet
	api  *http.Client // reaches the API handler in memory
	logs *syncBuf
}

func startBubble(t *testing.T, cfg *config.Config, kv kvsize.Request, engines *memNet) *bubbleService {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	targets, err := resolveTargets(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuf{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	p := newPipeline(ctx, cfg, targets, Options{KVRequest: kv, Client: engines.client(), Logger: log}, log)
	done, err := p.start(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		<-done
	})
	apiNet := newMemNet()
	apiNet.add("ptdmon:9433", (&api.Server{Ledger: p.ledger, Logger: log}).Handler())
	return &bubbleService{base: "http://ptdmon:9433", api: apiNet.client(), logs: logs}
}

func (b *bubbleService) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := json.Unmarshal(b.get(t, path), v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func (b *bubbleService) getText(t *testing.T, path string) string {
	t.Helper()
	return string(b.get(t, path))
}

func (b *bubbleService) get(t *testing.T, path string) []byte {
	t.Helper()
	return get(t, b.api, b.base+path)
}

// get reads url with c and fails the test unless it answers 200.
func get(t *testing.T, c *http.Client, url string) []byte {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return body
}
