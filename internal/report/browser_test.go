package report

// The HTML report in a real headless Chromium, opened from a file as a mail
// attachment would be: nothing is fetched, the charts are drawn with data,
// and every number the page shows is the JSON report's.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

type pageView struct {
	Verdict string
	Lines   []struct {
		Key    string
		Points int
		Width  float64 // drawn width of the line's polylines, px
	}
	Values []struct{ Key, Value, Text string }
	Bands  int
	Rows   int
}

const viewJS = `(() => ({
  Verdict: document.querySelector("#verdict").dataset.stage,
  Lines: [...document.querySelectorAll("svg g.line")].map((g) => ({
    Key: g.dataset.key, Points: +g.dataset.points,
    Width: [...g.querySelectorAll("polyline")].reduce((w, p) => w + p.getBoundingClientRect().width, 0),
  })),
  Values: [...document.querySelectorAll("[data-key][data-value]")].map((e) => ({Key: e.dataset.key, Value: e.dataset.value, Text: e.textContent.trim()})),
  Bands: document.querySelectorAll("svg rect[class^=b-]").length,
  Rows: document.querySelectorAll("#verdicts tr[data-stage]").length,
}))()`

func TestHTMLInChromium(t *testing.T) {
	testutil.NeedChromium(t)
	in, _ := simInput(t, "prefill-bound", 1, 200*time.Second, nil)
	r, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	v := openInChromium[pageView](t, page, viewJS)
	// The charts: three rate curves and the KV bytes curve, each with a
	// point per second that had a rate, drawn across most of the chart.
	drawn := map[string]bool{}
	for _, l := range v.Lines {
		drawn[l.Key] = true
		if l.Points < 150 {
			t.Errorf("curve %s has %d points, want ≥ 150 of 200", l.Key, l.Points)
		}
		if l.Width < 500 {
			t.Errorf("curve %s is %.0f px wide: not drawn", l.Key, l.Width)
		}
	}
	for _, k := range []string{"prefill", "kv", "decode", "kvbytes"} {
		if !drawn[k] {
			t.Errorf("no %s curve on the page", k)
		}
	}
	if v.Bands != len(r.Verdicts) || v.Rows != len(r.Verdicts) {
		t.Errorf("verdict band %d and table %d spans, the JSON has %d", v.Bands, v.Rows, len(r.Verdicts))
	}

	// The numbers: each is the JSON's, and the text shows it.
	if v.Verdict != doc["verdict"].(map[string]any)["stage"] {
		t.Errorf("verdict %q, JSON %v", v.Verdict, doc["verdict"])
	}
	seen := map[string]bool{}
	for _, x := range v.Values {
		seen[x.Key] = true
		want, ok := lookup(doc, x.Key)
		if !ok {
			t.Errorf("%s: not in the JSON", x.Key)
			continue
		}
		switch w := want.(type) {
		case float64:
			got, err := strconv.ParseFloat(x.Value, 64)
			if err != nil || math.Abs(got-w) > 1e-9*math.Abs(w) {
				t.Errorf("%s: page %q, JSON %v", x.Key, x.Value, w)
			}
			if shown, err := strconv.ParseFloat(strings.Fields(x.Text)[0], 64); err == nil && !strings.Contains(x.Text, "/s") && !strings.HasSuffix(x.Text, "%") {
				if math.Abs(shown-w) > 0.005*math.Abs(w)+1e-9 {
					t.Errorf("%s: shows %q, JSON %v", x.Key, x.Text, w)
				}
			}
		case nil: // absent: shown as a dash, never as 0
			if x.Value != "" || x.Text != "–" {
				t.Errorf("%s: absent in the JSON, the page shows %q (%q)", x.Key, x.Text, x.Value)
			}
		case string:
			if x.Value != w {
				t.Errorf("%s: page %q, JSON %q", x.Key, x.Value, w)
			}
		default:
			t.Errorf("%s: JSON value %v", x.Key, want)
		}
	}
	keys := []string{"steady.from", "steady.to", "stages.prefill.requests_per_second", "stages.kv.ci95.0", "stages.decode.ci95.1", "kv.bytes_per_second"}
	if len(r.Pools) < 2 {
		t.Errorf("the run has %d pools, want its two engine kinds", len(r.Pools))
	}
	for i := range r.Pools {
		keys = append(keys, fmt.Sprintf("pools.%d.stages.kv.requests_per_second", i))
	}
	for _, k := range keys {
		if !seen[k] {
			t.Errorf("the page does not show %s", k)
		}
	}
}

// lookup walks a dotted path (numbers index arrays) in decoded JSON.
func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, p := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[p]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// openInChromium writes page to a file, opens it in headless Chromium,
// fails the test if the page requests anything but itself, and returns
// what js evaluates to once it has loaded.
func openInChromium[T any](t *testing.T, page []byte, js string) T {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	fileURL := "file://" + path
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, cancelA := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(testutil.Chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var requests []string
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(fileURL)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // late requests (fonts, images) would start by now
	v, err := chromedp.Run(bctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if u != fileURL {
			t.Errorf("the page requested %s: it must not fetch anything", u)
		}
	}
	if len(requests) == 0 {
		t.Error("no request seen at all: the network watch is broken")
	}
	return v
}

// TestComparisonInChromium opens the comparison of a prefill-bound round
// with the round after the advice: nothing is fetched, and the page shows
// the bottleneck moving and each stage's difference as beyond the noise.
func TestComparisonInChromium(t *testing.T) {
	testutil.NeedChromium(t)
	before := simReport(t, "prefill-bound", 1, nil)
	after := simReport(t, "prefill-bound", 2, func(sc *sim.Scenario) {
		for i := range sc.Groups {
			sc.Groups[i].Prefill.Instances++
		}
	})
	c := Compare(before, after, "before", "after")
	page, err := c.HTML()
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		A, B   string
		Moved  bool
		Signif []string
	}
	v := openInChromium[view](t, page, `(() => ({
  A: document.querySelector("[data-key='verdict.a']").textContent, B: document.querySelector("[data-key='verdict.b']").textContent,
  Moved: document.body.textContent.includes("The bottleneck moved"),
  Signif: [...document.querySelectorAll("#stages tr[data-stage]")].filter((r) => r.querySelector(".sig")).map((r) => r.dataset.stage),
}))()`)
	if v.A != string(c.Verdict.A) || v.B != string(c.Verdict.B) || !v.Moved {
		t.Errorf("page verdicts %q → %q (moved %v), comparison %s → %s", v.A, v.B, v.Moved, c.Verdict.A, c.Verdict.B)
	}
	var want []string
	for _, s := range c.stageList() {
		if s.D.Significant {
			want = append(want, s.Key)
		}
	}
	if strings.Join(v.Signif, ",") != strings.Join(want, ",") || len(want) == 0 {
		t.Errorf("page marks %v beyond noise, the comparison %v", v.Signif, want)
	}
}
