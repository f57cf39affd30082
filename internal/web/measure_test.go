package web_test

// A measurement tool, not a check: the cost of the page of a running ptdmon
// in headless Chromium (docs/fleet.md, "The UI and top at 5,000 instances:
// the page"). It runs only when PTDMON_MEASURE_URL names that ptdmon:
//
//	PTDMON_MEASURE_URL=http://127.0.0.1:PORT go test -run TestMeasurePage -v -timeout 10m ./internal/web
//
// PTDMON_MEASURE_SECONDS (default 60) is the steady-state span,
// PTDMON_MEASURE_BOUND (default 120) the longest wait for the page to fill.
// The figures go to the log and, as JSON, to $PTDMON_ARTIFACTS/measure.json.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// loadJS reads the paint timings and whether the table and the charts have
// data; it reads the old page (one row per instance, no tbody classes) and
// the new one alike.
const loadJS = `(() => {
  const p = performance.getEntriesByType("paint");
  const g = (n) => { const e = p.find((x) => x.name === n); return e ? e.startTime : -1; };
  const r = document.getElementById("chart-rates");
  const pts = ((r && r.dataset.points) || "").split(",").map(Number);
  return { Now: performance.now(), FP: g("first-paint"), FCP: g("first-contentful-paint"),
    Rows: document.querySelectorAll("#instances tbody tr[data-target]").length,
    Ready: document.documentElement.dataset.ready === "1", Points: Math.max(0, ...pts.filter((x) => x >= 0)),
    DOMNodes: document.getElementsByTagName("*").length,
    Up: ["big-p", "big-d"].map((id) => document.querySelector("#" + id + " .up").textContent).join(", ") };
})()`

type loadProbe struct {
	Now, FP, FCP float64
	Rows         int
	Ready        bool
	Points       int
	DOMNodes     int
	Up           string // the tiles' "N/M instances up"
}

// pageLoad is one load of the page; times are from the navigation's start
// (-1: not within the bound).
type pageLoad struct {
	FirstPaintMS           float64  `json:"first_paint_ms"`
	FirstContentfulPaintMS float64  `json:"first_contentful_paint_ms"`
	TableFilledMS          float64  `json:"table_filled_ms"`
	ChartsFilledMS         float64  `json:"charts_filled_ms"`
	TableRows              int      `json:"table_rows"`
	DOMNodes               int      `json:"dom_nodes"`
	InstancesUp            string   `json:"instances_up"`
	Bytes                  float64  `json:"bytes"` // responses until both were filled
	ByURL                  []string `json:"by_url,omitempty"`
}

func (l pageLoad) filled() bool { return l.TableFilledMS >= 0 || l.ChartsFilledMS >= 0 }

func (l pageLoad) String() string {
	return fmt.Sprintf("first paint %.0f ms, first contentful paint %.0f ms, table filled %.0f ms (%d rows), charts filled %.0f ms, %d DOM nodes, %.0f bytes (%s)",
		l.FirstPaintMS, l.FirstContentfulPaintMS, l.TableFilledMS, l.TableRows, l.ChartsFilledMS, l.DOMNodes, l.Bytes, l.InstancesUp)
}

type pageCost struct {
	URL                    string   `json:"url"`
	LoadAverage            string   `json:"load_average_before"`
	LoadAverageAfter       string   `json:"load_average_after"`
	First                  pageLoad `json:"first_load"`  // a fresh browser profile
	Second                 pageLoad `json:"second_load"` // a reload: assets revalidated, server caches warm
	Seconds                float64  `json:"steady_seconds"`
	CPU                    cpuStats `json:"cpu"`
	ResponseBytesPerSecond float64  `json:"response_bytes_per_second"`
	StreamBytesPerSecond   float64  `json:"stream_bytes_per_second"`
	StreamEvents           int      `json:"stream_events"`
	StreamEventMaxBytes    int      `json:"stream_event_max_bytes"`
	RequestsPerSecond      float64  `json:"requests_per_second"`
}

func envSeconds(name string, def float64) time.Duration {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		def = v
	}
	return time.Duration(def * float64(time.Second))
}

func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// TestMeasurePage measures, for the page of PTDMON_MEASURE_URL: first paint
// and first contentful paint; the time until the instance table and the
// rates chart have data; then, over the steady span, the tab's CPU
// (Performance.getMetrics TaskDuration and ScriptDuration, and the renderer
// processes' CPU from /proc), its JS heap, and the bytes the client
// receives per second (responses, headers included, plus the event
// stream's messages with their framing).
func TestMeasurePage(t *testing.T) {
	base := strings.TrimSuffix(os.Getenv("PTDMON_MEASURE_URL"), "/")
	if base == "" {
		t.Skip("a measurement tool: set PTDMON_MEASURE_URL to a running ptdmon (docs/fleet.md)")
	}
	if _, err := os.Stat(testutil.Chromium); err != nil {
		t.Fatalf("%s: %v", testutil.Chromium, err)
	}
	steady, bound := envSeconds("PTDMON_MEASURE_SECONDS", 60), envSeconds("PTDMON_MEASURE_BOUND", 120)
	ctx, cancel := context.WithTimeout(context.Background(), bound+steady+60*time.Second)
	defer cancel()
	cost := pageCost{URL: base, LoadAverage: loadAverage()}

	b := startBrowser(t, ctx)
	net := b.watchNetwork()
	must(t, enableNetwork(b))
	_, err := chromedp.Call(b.ctx, performance.Enable, performance.EnableParams{})
	must(t, err)
	cost.First = b.measureLoad(t, net, base+"/", bound)
	cost.First.ByURL = strings.Fields(net.loaded().String())
	t.Logf("first load: %s: %s", cost.First, strings.Join(cost.First.ByURL, " "))
	if cost.First.filled() {
		cost.Second = b.measureLoad(t, net, base+"/", bound)
		t.Logf("second load: %s", cost.Second)
	}

	if cost.Second.filled() {
		time.Sleep(5 * time.Second) // past the first polls
		n0 := net.mark()
		cost.CPU = b.measureCPU(t, steady)
		n1 := net.mark()
		secs := n1.at.Sub(n0.at).Seconds()
		cost.Seconds = math.Round(secs*10) / 10
		cost.ResponseBytesPerSecond = math.Round((n1.responseBytes - n0.responseBytes) / secs)
		cost.StreamBytesPerSecond = math.Round(float64(n1.streamBytes-n0.streamBytes) / secs)
		cost.StreamEvents = n1.events - n0.events
		cost.RequestsPerSecond = math.Round(float64(n1.requests-n0.requests)/secs*10) / 10
		_, cost.StreamEventMaxBytes = net.stream()
		t.Logf("steady %.0f s: %s; %.0f B/s of responses + %.0f B/s of stream (%d events, largest %d B), %.1f requests/s",
			secs, cost.CPU, cost.ResponseBytesPerSecond, cost.StreamBytesPerSecond, cost.StreamEvents, cost.StreamEventMaxBytes, cost.RequestsPerSecond)
	} else {
		t.Logf("the page was not filled within %v", bound)
	}
	cost.LoadAverageAfter = loadAverage()
	t.Logf("load average before %s, after %s", cost.LoadAverage, cost.LoadAverageAfter)
	out, _ := json.MarshalIndent(cost, "", "  ")
	path := filepath.Join(artifacts(t), "measure.json")
	must(t, os.WriteFile(path, out, 0o644))
	t.Logf("%s:\n%s", path, out)
}

// measureLoad navigates to url and polls the page until its table and its
// charts have data, or bound passes.
func (b *browser) measureLoad(t *testing.T, net *netLog, url string, bound time.Duration) pageLoad {
	t.Helper()
	l := pageLoad{TableFilledMS: -1, ChartsFilledMS: -1}
	must(t, navigate(b, "about:blank")) // no probe reads the previous page
	n0 := net.mark()
	// Navigate returns once the load event fired; the probes are timed by
	// the page's own clock, from the navigation's start.
	nav := make(chan error, 1)
	go func() { nav <- navigate(b, url) }()
	deadline := time.Now().Add(bound)
	var last loadProbe
	navigated := false
	for time.Now().Before(deadline) && (l.TableFilledMS < 0 || l.ChartsFilledMS < 0) {
		select {
		case err := <-nav:
			navigated = true
			if err != nil {
				t.Logf("navigation: %v", err)
			}
		default:
		}
		pctx, pcancel := context.WithTimeout(b.ctx, 10*time.Second)
		p, err := chromedp.Run(pctx, chromedp.Evaluate[loadProbe](loadJS))
		pcancel()
		if err != nil { // before the page's elements exist, or its thread is busy
			time.Sleep(100 * time.Millisecond)
			continue
		}
		last = p
		if p.Rows > 0 && l.TableFilledMS < 0 {
			l.TableFilledMS = math.Round(p.Now)
		}
		if p.Ready && p.Points > 0 && l.ChartsFilledMS < 0 {
			l.ChartsFilledMS = math.Round(p.Now)
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.FirstPaintMS, l.FirstContentfulPaintMS = math.Round(last.FP), math.Round(last.FCP)
	l.TableRows, l.DOMNodes, l.InstancesUp = last.Rows, last.DOMNodes, last.Up
	l.Bytes = net.mark().responseBytes - n0.responseBytes
	if !navigated {
		select {
		case <-nav:
		default:
			t.Logf("the load event had not fired after %v", bound)
		}
	}
	return l
}
