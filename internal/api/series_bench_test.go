package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// discard is a ResponseWriter that keeps nothing, so the benchmark counts
// only what the handler itself holds.
type discard struct {
	h http.Header
	n int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkSeries100x900 serves 15 minutes of 100 instances, the request
// that once built the whole history in memory. peak-heap-MB is the most
// heap in use during the requests beyond what the ledger holds, sampled
// every 5 ms; response-MB is what one request sends.
func BenchmarkSeries100x900(b *testing.B) {
	l := ledger.New(ledger.Config{Window: 5 * time.Second, InstanceBudget: 1 << 30})
	var infos []engine.Target
	for i := range 100 {
		infos = append(infos, engine.Target{Name: fmt.Sprintf("p%d", i), Role: engine.Prefill, Engine: engine.VLLM})
	}
	l.SetTargets(infos)
	start := time.Now().Add(-900 * time.Second)
	for k := range 900 {
		now := start.Add(time.Duration(k) * time.Second)
		for j, in := range infos {
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Obs: observe(in, j, float64(k))})
		}
		l.Tick(now.Add(500 * time.Millisecond))
	}
	h := (&Server{Ledger: l}).Handler()
	req := httptest.NewRequest("GET", "/api/v1/series?last=900", nil)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	b.ReportAllocs()
	w := &discard{h: http.Header{}}
	for b.Loop() {
		w.n = 0
		h.ServeHTTP(w, req)
	}
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(w.n)/(1<<20), "response-MB")
}
