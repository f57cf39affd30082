package web_test

// The dashboard in a real headless Chromium, driven over the DevTools
// protocol by chromedp: what an engineer looks at in each demo scenario, the
// page's weight and CPU, and the screenshots in docs/screenshots.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "rewrite docs/screenshots/*.png from the demo scenarios")

// TestDashboardInChromium loads the dashboard of `ptdmon demo -scenario
// kv-bound` in headless Chromium and checks what an engineer would look at:
// the three curves drawn with data, a KV verdict, every instance in the
// table. It writes a screenshot and reports the page's weight and CPU.
func TestDashboardInChromium(t *testing.T) {
	t.Parallel() // a demo process of its own, waited on (demoTests)
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	base := os.Getenv("PTDMON_BROWSER_URL") // for development: an already running ptdmon
	if base == "" {
		base = startDemo(t, ctx, buildPtdmon(t, ctx), "kv-bound")
	}
	base = strings.TrimSuffix(base, "/")
	waitForVerdict(t, ctx, base, "kv", 50*time.Second)
	want := targetNames(t, base)

	b := startBrowser(t, ctx)
	net := b.watchNetwork()
	_, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{})
	must(t, err)
	_, err = chromedp.Call(b.ctx, performance.Enable, performance.EnableParams{})
	must(t, err)
	loadStart := time.Now()
	must(t, chromedp.Do(b.ctx, chromedp.Navigate(base+"/")))
	st := b.waitReady(t, len(want), func(s pageState) bool { return s.Stage == "kv" })
	firstLoad := net.loaded()
	t.Logf("first load: ready in %v, %.0f bytes transferred over %d requests (stream excluded): %s",
		time.Since(loadStart).Round(time.Millisecond), firstLoad.total, len(firstLoad.byURL), firstLoad)

	// The three curves: labelled, with data, and drawn by uPlot in their
	// colours on the canvas.
	if st.Labels != "Prefill,KV transfer,Decode" {
		t.Errorf("rate chart curves %q", st.Labels)
	}
	for i, n := range st.counts() {
		if n < 5 {
			t.Errorf("curve %d has %d points", i, n)
		}
	}
	for name, px := range st.Pixels {
		if px < 40 {
			t.Errorf("the %s curve has %d pixels on the canvas: not drawn", name, px)
		}
	}
	if !strings.Contains(st.Head, "KV") || len(st.Evidence) == 0 {
		t.Errorf("verdict %q %q", st.Head, st.Evidence)
	}
	// The verdict timeline band under the stage chart ends in the verdict
	// shown in the banner.
	if band := strings.Split(st.Verdicts, ","); band[len(band)-1] != "kv" {
		t.Errorf("verdict band %q should end in kv", st.Verdicts)
	}
	sort.Strings(st.Rows)
	if strings.Join(st.Rows, ",") != strings.Join(want, ",") {
		t.Errorf("instance table %v, want %v", st.Rows, want)
	}
	for i, v := range st.Big {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			t.Errorf("big number %d is %q", i, v)
		}
	}

	// Clicking a prefill instance's row filters the charts to it: its own
	// prefill and KV rates, and a gap (not a zero) for decode. The page
	// then fetches that instance's history, so the charts change once it
	// has arrived.
	prefillRow := b.eval(t, `(() => { const tr = [...document.querySelectorAll("#instances tbody.list tr[data-target]")].find((r) => r.children[1].textContent === "prefill"); tr.click(); return tr.dataset.target; })()`)
	one := b.waitReady(t, len(want), func(s pageState) bool { return s.Picked == prefillRow })
	if c := one.counts(); c[0] == 0 || c[1] == 0 || c[2] != 0 {
		t.Errorf("filtered to %s: points per curve %v, want prefill and KV only", prefillRow, c)
	}
	if filter := b.eval(t, `document.documentElement.dataset.filter`); filter != prefillRow {
		t.Errorf("filter %q after clicking %q", filter, prefillRow)
	}
	b.eval(t, `(() => { document.getElementById("clear-filter").click(); return document.documentElement.dataset.filter; })()`)

	// CPU of the tab while it follows the stream.
	cpu := b.measureCPU(t, 8*time.Second)
	events, maxEvent := net.stream()
	t.Logf("steady state: %s; %d stream events, largest %d bytes", cpu, events, maxEvent)
	if maxEvent >= 4096 {
		t.Errorf("a stream event is %d bytes; budget 4 KiB", maxEvent)
	}
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}

	dir := artifacts(t)
	path := filepath.Join(dir, "dashboard-kv-bound.png")
	must(t, os.WriteFile(path, b.screenshot(t), 0o644))
	t.Logf("screenshot: %s", path)
	report, _ := json.MarshalIndent(map[string]any{
		"first_load_bytes": firstLoad.total, "first_load_requests": firstLoad.byURL,
		"cpu": cpu, "stream_events": events, "stream_event_max_bytes": maxEvent, "state": st,
	}, "", "  ")
	must(t, os.WriteFile(filepath.Join(dir, "dashboard-kv-bound.json"), report, 0o644))
}

// TestScenarioScreenshots opens the dashboard of every built-in demo
// scenario, checks the page shows it (curves with data, every instance, a
// connected badge, rates that say their window, no uncaught exception) and
// takes a screenshot. With -update-screenshots the screenshots replace
// docs/screenshots/<scenario>.png; otherwise they go to the artifacts
// directory only, so a normal run leaves tracked files alone.
func TestScenarioScreenshots(t *testing.T) {
	t.Parallel() // a demo process of its own, waited on (demoTests)
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	bin := buildPtdmon(t, ctx)
	names := sim.ScenarioNames()
	urls := make([]string, len(names))
	for i, n := range names {
		urls[i] = startDemo(t, ctx, bin, n)
	}
	// A screenshot worth reading has a minute... or at least 25 s of data.
	time.Sleep(25 * time.Second)
	b := startBrowser(t, ctx)
	out := artifacts(t)
	if *updateScreenshots {
		out = filepath.Join(moduleRoot(t), "docs", "screenshots")
		must(t, os.MkdirAll(out, 0o755))
		// Which page they show, for TestScreenshotsShowThisPage.
		must(t, os.WriteFile(filepath.Join(out, screenshotsPage), []byte(pageHash(t)+"\n"), 0o644))
	}
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			want := targetNames(t, urls[i])
			must(t, chromedp.Do(b.ctx, chromedp.Navigate(urls[i]+"/")))
			st := b.waitReady(t, len(want), func(pageState) bool { return true })
			if st.Badge == "connecting…" {
				t.Errorf("badge says %q with data on the page", st.Badge)
			}
			for _, u := range st.Units {
				if !strings.Contains(u, "over 5 s") {
					t.Errorf("a tile's unit %q does not say its window", u)
				}
			}
			if errs := b.exceptions(); len(errs) > 0 {
				t.Errorf("uncaught exceptions in the page: %q", errs)
			}
			png := b.screenshot(t)
			path := filepath.Join(out, name+".png")
			must(t, os.WriteFile(path, png, 0o644))
			t.Logf("%s: %d bytes", path, len(png))
		})
	}
}

// stateJS reads what the page exposes for tests, and counts the pixels of
// each curve's colour on the rates canvas.
const stateJS = `(() => { try {
  const root = document.documentElement, r = document.getElementById("chart-rates");
  const px = {};
  const c = r && r.querySelector("canvas");
  if (c && c.width) {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    const want = { prefill: [0x1f, 0x6f, 0xd1], kv: [0xe8, 0x71, 0x0a], decode: [0x1e, 0x9e, 0x4a] };
    for (const k in want) px[k] = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] < 200) continue;
      for (const k in want) {
        const w = want[k];
        if (Math.abs(d[i] - w[0]) < 24 && Math.abs(d[i + 1] - w[1]) < 24 && Math.abs(d[i + 2] - w[2]) < 24) px[k]++;
      }
    }
  }
  return {
    Ready: root.dataset.ready || "", SSE: root.dataset.sse || "",
    Points: (r && r.dataset.points) || "", Labels: (r && r.dataset.labels) || "",
    Verdicts: (r && r.dataset.verdicts) || "",
    Stage: document.getElementById("verdict").dataset.stage || "",
    Head: document.getElementById("verdict-head").textContent,
    Badge: document.getElementById("conn").textContent,
    Evidence: [...document.querySelectorAll("#verdict-evidence li")].map((li) => li.textContent),
    Rows: [...document.querySelectorAll("#instances tbody.list tr[data-target]")].map((tr) => tr.dataset.target),
    Picked: root.dataset.picked || "",
    Big: ["big-p", "big-k", "big-d"].map((id) => document.querySelector("#" + id + " .v").textContent),
    Units: ["big-p", "big-k", "big-d"].map((id) => document.querySelector("#" + id + " .u").textContent),
    Pixels: px,
  };
} catch (e) { return { Error: String(e) }; } })()`

type pageState struct {
	Ready, SSE, Points, Labels, Stage, Head, Badge, Error string
	Picked                                                string // the instance the charts show
	Verdicts                                              string // the verdict band's stages, oldest first
	Evidence, Rows, Big, Units                            []string
	Pixels                                                map[string]int
}

// ready: the stream is open and every curve of the rates chart has data;
// a stage whose instances are all down has none, so curves are not required
// to have points beyond what the scenario can give.
func (s pageState) ready() bool {
	if s.Ready != "1" || s.SSE != "open" {
		return false
	}
	n := 0
	for _, c := range s.counts() {
		n = max(n, c)
	}
	return n >= 5
}

func (s pageState) counts() []int {
	var out []int
	for _, f := range strings.Split(s.Points, ",") {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	for len(out) < 3 {
		out = append(out, 0)
	}
	return out
}

// built is the ptdmon binary the browser tests run, built once for all of
// them: each build links the whole binary again.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// The tests that run `ptdmon demo` in a process of their own (demoTest)
// spend most of their time waiting for it to have run long enough (a
// verdict, the advisor's estimates, seconds of data): they are parallel,
// and all of them run at once unless -parallel is given. Those that serve
// the page from this process, over a ledger fed here, are not: they
// compute, and their checks of what the page asks for and when would
// wait on the others.
const demoTests = 16

func TestMain(m *testing.M) {
	code := testutil.MainParallel(m, demoTests)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func buildPtdmon(t *testing.T, ctx context.Context) string {
	t.Helper()
	root := moduleRoot(t)
	built.once.Do(func() {
		// The binary outlives the test that builds it: TestMain removes it.
		if built.dir, built.err = os.MkdirTemp("", "ptdmon-web-test"); built.err != nil { //nolint:usetesting // shared by every test, removed by TestMain
			return
		}
		built.bin = filepath.Join(built.dir, "ptdmon")
		build := exec.CommandContext(ctx, "go", "build", "-o", built.bin, "./cmd/ptdmon")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build ./cmd/ptdmon: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// startDemo runs `ptdmon demo` on a free port and returns its URL.
func startDemo(t *testing.T, ctx context.Context, bin, scenario string) string {
	t.Helper()
	return run(t, ctx, "ptdmon demo: open ", bin, "demo", "-scenario", scenario, "-seed", "1", "-listen", "127.0.0.1:0")
}

func targetNames(t *testing.T, base string) []string {
	t.Helper()
	var targets []struct{ Name string }
	getJSON(t, strings.TrimSuffix(base, "/")+"/api/v1/targets", &targets)
	want := make([]string, len(targets))
	for i, tg := range targets {
		want[i] = tg.Name
	}
	sort.Strings(want)
	return want
}

// run starts a command and returns the URL it prints after prefix.
func run(t *testing.T, ctx context.Context, prefix, bin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &logWriter{t: t, prefix: args[0] + ": "}
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), prefix); ok {
				found <- strings.TrimSuffix(strings.TrimSpace(after), "/")
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(20 * time.Second):
		t.Fatalf("%s %v printed no %q line in 20 s", bin, args, prefix)
	}
	return ""
}

func waitForVerdict(t *testing.T, ctx context.Context, base, stage string, limit time.Duration) {
	t.Helper()
	start := time.Now()
	var last any
	testutil.Eventually(t, limit, 500*time.Millisecond, func() (bool, string) {
		if ctx.Err() != nil {
			t.Fatalf("no %q verdict before the test's deadline; last: %+v", stage, last)
		}
		var snap struct {
			Verdict *struct {
				Stage    string
				Evidence []string
			}
		}
		if getJSONQuiet(base+"/api/v1/snapshot", &snap) == nil && snap.Verdict != nil {
			last = *snap.Verdict
			if snap.Verdict.Stage == stage {
				t.Logf("verdict %q after %v: %q", stage, time.Since(start).Round(time.Second), snap.Verdict.Evidence)
				return true, ""
			}
		}
		return false, fmt.Sprintf("no %q verdict; last: %+v", stage, last)
	})
}

// browser is one headless Chromium tab.
type browser struct {
	ctx context.Context
	pid int

	mu     sync.Mutex
	thrown []string
}

// startBrowser starts Debian's Chromium with a fresh profile, headless and
// without the background traffic a test must not make.
func startBrowser(t *testing.T, ctx context.Context) *browser {
	t.Helper()
	profile := t.TempDir()
	actx, cancelA := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(testutil.Chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	must(t, chromedp.Do(bctx, chromedp.Navigate("about:blank")))
	b := &browser{ctx: bctx, pid: chromedp.FromContext(bctx).Browser.Process().Pid}
	must(t, chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok && e.ExceptionDetails != nil {
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			b.mu.Lock()
			b.thrown = append(b.thrown, msg)
			b.mu.Unlock()
		}
	}))
	return b
}

func (b *browser) exceptions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.thrown
	b.thrown = nil
	return out
}

func runEval[T any](b *browser, js string) (T, error) {
	return chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
}

func enableNetwork(b *browser) error {
	_, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{})
	return err
}

func navigate(b *browser, url string) error {
	return chromedp.Do(b.ctx, chromedp.Navigate(url))
}

func (b *browser) eval(t *testing.T, js string) string {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	must(t, err)
	return v
}

func (b *browser) state(t *testing.T) pageState {
	t.Helper()
	st, err := chromedp.Run(b.ctx, chromedp.Evaluate[pageState](stateJS))
	must(t, err)
	if st.Error != "" {
		t.Fatalf("page state: %s", st.Error)
	}
	return st
}

// waitReady polls the page until it shows data for rows instances and done
// holds, for up to 30 s.
func (b *browser) waitReady(t *testing.T, rows int, done func(pageState) bool) pageState {
	t.Helper()
	var st pageState
	testutil.Eventually(t, 30*time.Second, 250*time.Millisecond, func() (bool, string) {
		st = b.state(t)
		return st.ready() && len(st.Rows) == rows && done(st), fmt.Sprintf("page not ready: %+v", st)
	})
	return st
}

// screenshot is a PNG of the page from the top, as wide as the window and
// as tall as the content (within bounds).
func (b *browser) screenshot(t *testing.T) []byte {
	t.Helper()
	lm, err := chromedp.Call(b.ctx, page.GetLayoutMetrics, cdp.Empty{})
	must(t, err)
	h := 900.0
	if lm.CSSContentSize != nil {
		h = math.Min(math.Max(lm.CSSContentSize.Height, 800), 2400)
	}
	yes := true
	r, err := chromedp.Call(b.ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: &yes,
		Clip: &page.Viewport{Width: 1280, Height: h, Scale: 0.7}, // modest files for docs/
	})
	must(t, err)
	return r.Data
}

// screenshotOf is a PNG of the page from the top of the element that
// matches sel, 1280 px wide and up to 1400 px tall.
func (b *browser) screenshotOf(t *testing.T, sel string) []byte {
	t.Helper()
	type box struct{ Top, Height float64 }
	r, err := runEval[box](b, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return { Top: r.top + scrollY, Height: r.height }; })()`, sel))
	must(t, err)
	yes := true
	shot, err := chromedp.Call(b.ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: &yes,
		Clip: &page.Viewport{Y: r.Top - 8, Width: 1280, Height: math.Min(r.Height+16, 1400), Scale: 0.7},
	})
	must(t, err)
	return shot.Data
}

// netLog follows the Network domain: the requests made, bytes per URL and
// the stream's messages.
type netLog struct {
	mu       sync.Mutex
	reqs     []string // path?query of every request, in order
	urls     map[network.RequestID]string
	bytes    map[network.RequestID]float64
	events   int
	maxEvent int
	// Running totals, for rates over a span (mark).
	responseBytes float64
	streamBytes   int
}

// netMark is netLog's totals at one instant.
type netMark struct {
	at            time.Time
	responseBytes float64
	streamBytes   int
	events        int
	requests      int
}

func (l *netLog) mark() netMark {
	l.mu.Lock()
	defer l.mu.Unlock()
	return netMark{at: time.Now(), responseBytes: l.responseBytes, streamBytes: l.streamBytes, events: l.events, requests: len(l.reqs)}
}

type loadStats struct {
	total float64
	byURL map[string]float64
}

func (l loadStats) String() string {
	var parts []string
	for u, n := range l.byURL {
		parts = append(parts, fmt.Sprintf("%s=%.0f", u, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func (b *browser) watchNetwork() *netLog {
	l := &netLog{urls: map[network.RequestID]string{}, bytes: map[network.RequestID]float64{}}
	chromedp.Listen(b.ctx, func(ev any) {
		l.mu.Lock()
		defer l.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if e.Request != nil {
				l.urls[e.RequestID] = e.Request.URL
				l.reqs = append(l.reqs, pathOf(e.Request.URL))
			}
		case *network.EventLoadingFinished:
			l.bytes[e.RequestID] = e.EncodedDataLength
			l.responseBytes += e.EncodedDataLength
		case *network.EventEventSourceMessageReceived:
			l.events++
			// The event on the wire: its fields plus the SSE framing.
			n := len(e.Data) + len("event: point\nid: 1795953179491\ndata: \n\n")
			l.streamBytes += n
			if n > l.maxEvent {
				l.maxEvent = n
			}
		}
	})
	return l
}

func (l *netLog) loaded() loadStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := loadStats{byURL: map[string]float64{}}
	for id, n := range l.bytes {
		u := pathOf(l.urls[id])
		s.byURL[u] += n
		s.total += n
	}
	return s
}

// pathOf cuts the scheme and host off a URL.
func pathOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			return u[i+3+j:]
		}
	}
	return u
}

// requests returns path?query of every request made so far.
func (l *netLog) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

func (l *netLog) stream() (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events, l.maxEvent
}

type cpuStats struct {
	MainThread float64 `json:"main_thread_fraction"`      // Performance.getMetrics TaskDuration
	Script     float64 `json:"script_fraction"`           // of which JS
	Renderer   float64 `json:"renderer_process_fraction"` // /proc utime+stime of the renderers
	HeapMB     float64 `json:"js_heap_mb"`
}

func (c cpuStats) String() string {
	return fmt.Sprintf("tab main thread %.1f%% of a core (JS %.1f%%), renderer processes %.1f%%, JS heap %.1f MB",
		100*c.MainThread, 100*c.Script, 100*c.Renderer, c.HeapMB)
}

func (b *browser) measureCPU(t *testing.T, d time.Duration) cpuStats {
	t.Helper()
	metrics := func() map[string]float64 {
		m := map[string]float64{}
		r, err := chromedp.Call(b.ctx, performance.GetMetrics, cdp.Empty{})
		must(t, err)
		for _, x := range r.Metrics {
			m[x.Name] = x.Value
		}
		return m
	}
	m0, p0, w0 := metrics(), rendererTicks(b.pid), time.Now()
	time.Sleep(d)
	m1, p1, w1 := metrics(), rendererTicks(b.pid), time.Now()
	wall := m1["Timestamp"] - m0["Timestamp"]
	if wall <= 0 {
		wall = w1.Sub(w0).Seconds()
	}
	return cpuStats{
		MainThread: (m1["TaskDuration"] - m0["TaskDuration"]) / wall,
		Script:     (m1["ScriptDuration"] - m0["ScriptDuration"]) / wall,
		Renderer:   (p1 - p0) / 100 / w1.Sub(w0).Seconds(), // USER_HZ is 100 on Linux
		HeapMB:     math.Round(m1["JSHeapUsedSize"]/1e5) / 10,
	}
}

// rendererTicks sums utime+stime of the browser's renderer processes.
func rendererTicks(browserPid int) float64 {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var sum float64
	for _, p := range procs {
		cmdline, err := os.ReadFile(p + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), "--type=renderer") || !descends(p, browserPid) {
			continue
		}
		stat, err := os.ReadFile(p + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name (which may hold spaces).
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseFloat(f[11], 64)
			s, _ := strconv.ParseFloat(f[12], 64)
			sum += u + s
		}
	}
	return sum
}

func descends(procDir string, ancestor int) bool {
	for i := 0; i < 6; i++ {
		stat, err := os.ReadFile(procDir + "/stat")
		if err != nil {
			return false
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		ppid, _ := strconv.Atoi(f[1])
		if ppid == ancestor {
			return true
		}
		if ppid <= 1 {
			return false
		}
		procDir = "/proc/" + strconv.Itoa(ppid)
	}
	return false
}

func artifacts(t *testing.T) string {
	dir := os.Getenv("PTDMON_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ptdmon-artifacts")
	}
	must(t, os.MkdirAll(dir, 0o755))
	return dir
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	must(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	must(t, getJSONQuiet(url, v))
}

func getJSONQuiet(url string, v any) error {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// logWriter sends a child's stderr to the test log, line by line.
type logWriter struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
			w.t.Log(w.prefix + line)
		}
	}
	return len(b), nil
}

// TestAdvicePanelInChromium runs the decode-bound demo with SLO thresholds
// until the advisor has learned decode's capacity (about 80 s of real
// time: decode saturates after a minute), then checks that the page's
// advice panel shows the advised decode count /api/v1/advice gives, and a
// percentage for each SLO and a goodput.
func TestAdvicePanelInChromium(t *testing.T) {
	t.Parallel() // a demo process of its own, waited on (demoTests)
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 170*time.Second)
	defer cancel()
	base := run(t, ctx, "ptdmon demo: open ", buildPtdmon(t, ctx), "demo", "-scenario", "decode-bound", "-seed", "1",
		"-listen", "127.0.0.1:0", "-slo-ttft", "20", "-slo-itl", "0.05", "-slo-e2e", "15")
	var decode float64
	var limitsFirst string
	start := time.Now()
	testutil.Eventually(t, 130*time.Second, 2*time.Second, func() (bool, string) {
		if ctx.Err() != nil {
			t.Fatalf("no decode advice within %v", time.Since(start).Round(time.Second))
		}
		var body struct {
			Advice struct {
				Decode      struct{ Instances *float64 }
				LimitsFirst struct{ Stage string } `json:"limits_first"`
			}
		}
		if getJSONQuiet(base+"/api/v1/advice", &body) == nil && body.Advice.Decode.Instances != nil {
			decode = *body.Advice.Decode.Instances
			limitsFirst = body.Advice.LimitsFirst.Stage
		}
		return decode != 0, "no decode advice"
	})
	t.Logf("decode advice %g after %v", decode, time.Since(start).Round(time.Second))

	b := startBrowser(t, ctx)
	must(t, chromedp.Do(b.ctx, chromedp.Navigate(base+"/")))
	type panel struct {
		Decode, TTFT, ITL, E2E, Goodput, DecodeUse, NextLimit, Text string
	}
	const js = `(() => { const q = (s) => { const e = document.querySelector("#advice " + s); return e ? e.textContent : ""; };
		return { Decode: q("[data-stage=decode]"), TTFT: q("[data-slo=ttft]"), ITL: q("[data-slo=itl]"), E2E: q("[data-slo=e2e]"),
			Goodput: q("[data-slo=goodput]"), DecodeUse: q("[data-utilisation=decode]"), NextLimit: q("#next-limit"),
			Text: document.getElementById("advice").textContent }; })()`
	var p panel
	testutil.Eventually(t, 20*time.Second, 500*time.Millisecond, func() (bool, string) {
		var err error
		p, err = chromedp.Run(b.ctx, chromedp.Evaluate[panel](js))
		must(t, err)
		return p.Decode != "" && p.E2E != "", fmt.Sprintf("the advice panel shows no decode advice or E2E attainment: %q", p.Text)
	})
	// The advice may grow by one as the arrival estimate moves between polls.
	if n, err := strconv.ParseFloat(p.Decode, 64); err != nil || math.Abs(n-decode) > 1 {
		t.Errorf("panel's decode advice %q, API's %g: %q", p.Decode, decode, p.Text)
	}
	// A percentage, or a range of two where the whole request's SLO is
	// only bounded.
	for name, v := range map[string]string{"TTFT": p.TTFT, "ITL": p.ITL, "E2E": p.E2E} {
		for _, part := range strings.Split(strings.TrimPrefix(v, "≥ "), "–") {
			pct, ok := strings.CutSuffix(part, "%")
			if x, err := strconv.ParseFloat(pct, 64); !ok || err != nil || x < 0 || x > 100 {
				t.Errorf("%s attainment %q is not a percentage: %q", name, v, p.Text)
			}
		}
	}
	for _, part := range strings.Split(p.Goodput, "–") {
		if _, err := strconv.ParseFloat(part, 64); err != nil {
			t.Errorf("goodput %q: %q", p.Goodput, p.Text)
		}
	}
	// Decode, saturated, is at about all of its capacity, and the stage
	// the API says limits first is the one the headroom line names.
	if u, ok := strings.CutSuffix(p.DecodeUse, "%"); !ok || func() bool { x, err := strconv.ParseFloat(u, 64); return err != nil || x < 50 || x > 150 }() {
		t.Errorf("decode utilisation %q: %q", p.DecodeUse, p.Text)
	}
	if limitsFirst == "" || !strings.Contains(p.NextLimit, limitsFirst+" at ") {
		t.Errorf("headroom line %q, the API's limits first %q", p.NextLimit, limitsFirst)
	}
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
	t.Logf("advice panel: %s", p.Text)
}

// TestBalancedVerdictNamesNextLimit runs the balanced demo until the
// advisor estimates the stages below saturation, then checks that the
// page's Balanced verdict names the stage /api/v1/advice says will limit
// first, and that the headroom line shows each stage's utilisation.
func TestBalancedVerdictNamesNextLimit(t *testing.T) {
	t.Parallel() // a demo process of its own, waited on (demoTests)
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	base := startDemo(t, ctx, buildPtdmon(t, ctx), "balanced")
	var stage string
	testutil.Eventually(t, 90*time.Second, time.Second, func() (bool, string) {
		var body struct {
			Advice struct {
				LimitsFirst struct{ Stage string } `json:"limits_first"`
			}
		}
		if getJSONQuiet(base+"/api/v1/advice", &body) == nil {
			stage = body.Advice.LimitsFirst.Stage
		}
		return stage != "", "no stage limits first yet"
	})
	b := startBrowser(t, ctx)
	must(t, chromedp.Do(b.ctx, chromedp.Navigate(base+"/")))
	type view struct {
		Stage, Next, Prefill string
		Shown                bool
	}
	const js = `(() => { const n = document.getElementById("verdict-next"); const u = document.querySelector("#advice [data-utilisation=prefill]");
		return { Stage: document.getElementById("verdict").dataset.stage, Next: n.textContent, Shown: n.offsetParent !== null, Prefill: u ? u.textContent : "" }; })()`
	var v view
	testutil.Eventually(t, 20*time.Second, 500*time.Millisecond, func() (bool, string) {
		var err error
		v, err = chromedp.Run(b.ctx, chromedp.Evaluate[view](js))
		must(t, err)
		return v.Stage == "balanced" && v.Next != "" && v.Prefill != "", fmt.Sprintf("page: %+v", v)
	})
	if !v.Shown || !strings.HasPrefix(v.Next, "· next limit: "+stage+" at ") {
		t.Errorf("balanced verdict's next limit %q (shown %v), the API's %q", v.Next, v.Shown, stage)
	}
	if u, ok := strings.CutSuffix(v.Prefill, "%"); !ok || func() bool { x, err := strconv.ParseFloat(u, 64); return err != nil || x <= 0 || x > 100 }() {
		t.Errorf("prefill utilisation %q", v.Prefill)
	}
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
}
