package sim

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// benchModel is the default cluster after five minutes of traffic, so
// histograms and counters hold realistic values.
func benchModel(b *testing.B) *Model {
	b.Helper()
	sc, _ := LoadScenario("balanced")
	m, err := NewModel(sc, 1, testEpoch)
	if err != nil {
		b.Fatal(err)
	}
	m.AdvanceTo(5 * time.Minute)
	return m
}

func benchRender(b *testing.B, name string) {
	m := benchModel(b)
	buf, _, err := m.Exposition(name, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _, _ = m.Exposition(name, buf[:0])
	}
}

// One instance's /metrics body (one DP engine), as served per scrape.
func BenchmarkRenderVLLMFlagCXPrefill(b *testing.B) { benchRender(b, "vllm-p0") }
func BenchmarkRenderVLLMDecode(b *testing.B)        { benchRender(b, "vllm-d0") }
func BenchmarkRenderSGLangPrefill(b *testing.B)     { benchRender(b, "sglang-p0") }

// Advancing the model through one simulated second of default traffic.
func BenchmarkAdvanceOneSecond(b *testing.B) {
	m := benchModel(b)
	t := m.Now()
	b.ReportAllocs()
	for b.Loop() {
		t += time.Second
		m.AdvanceTo(t)
	}
}

// A full scrape over loopback HTTP (server and client in this process), the
// figure behind "instances one core can serve at 1 s scrapes": run with
// -cpu 1 and divide one second by ns/op.
func BenchmarkScrapeHTTP(b *testing.B) {
	sc, _ := LoadScenario("balanced")
	c, err := Start(context.Background(), sc, Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	url := c.Targets()[0].URL
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		k, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		n = k
	}
	b.SetBytes(n)
}
