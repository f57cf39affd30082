package web_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const chromium = "/usr/bin/chromium"

// TestDashboardInChromium loads the dashboard of `ptdmon demo -scenario
// kv-bound` (or, where the demo command does not exist yet, `ptdmon serve`
// over `ptdmon sim -scenario kv-bound`) in headless Chromium and checks
// what an engineer would look at: the three curves drawn with data, a KV
// verdict, every instance in the table. It writes a screenshot and reports
// the page's weight and CPU.
func TestDashboardInChromium(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("%s not installed (apt-get install chromium); CI runs this test", chromium)
		}
		t.Fatalf("CI is set but %s is missing: %v", chromium, err)
	}
	if testing.Short() {
		t.Skip("-short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	base := os.Getenv("PTDMON_BROWSER_URL") // for development: an already running ptdmon
	if base == "" {
		base = startPtdmon(t, ctx)
	}
	base = strings.TrimSuffix(base, "/")
	waitForVerdict(t, ctx, base, "kv", 50*time.Second)
	var targets []struct{ Name string }
	getJSON(t, base+"/api/v1/targets", &targets)
	want := make([]string, len(targets))
	for i, tg := range targets {
		want[i] = tg.Name
	}
	sort.Strings(want)

	b := startBrowser(t, ctx)
	net := b.watchNetwork()
	for _, m := range []string{"Network.enable", "Performance.enable", "Page.enable"} {
		must(t, b.call(ctx, m, nil, nil))
	}
	loadStart := time.Now()
	must(t, b.call(ctx, "Page.navigate", map[string]any{"url": base + "/"}, nil))

	var st pageState
	deadline := time.Now().Add(30 * time.Second)
	for {
		must(t, b.eval(ctx, stateJS, &st))
		if st.ready() && len(st.Rows) == len(want) && st.Stage == "kv" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("page not ready after 30 s: %+v", st)
		}
		time.Sleep(250 * time.Millisecond)
	}
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
	// prefill and KV rates, and a gap (not a zero) for decode.
	var prefillRow string
	must(t, b.eval(ctx, `(() => { const tr = [...document.querySelectorAll("#instances tbody tr")].find((r) => r.children[1].textContent === "prefill"); tr.click(); return tr.dataset.target; })()`, &prefillRow))
	var one pageState
	must(t, b.eval(ctx, stateJS, &one))
	if c := one.counts(); c[0] == 0 || c[1] == 0 || c[2] != 0 {
		t.Errorf("filtered to %s: points per curve %v, want prefill and KV only", prefillRow, c)
	}
	var filter string
	must(t, b.eval(ctx, `document.documentElement.dataset.filter`, &filter))
	if filter != prefillRow {
		t.Errorf("filter %q after clicking %q", filter, prefillRow)
	}
	must(t, b.eval(ctx, `(() => { document.getElementById("clear-filter").click(); return document.documentElement.dataset.filter; })()`, &filter))

	// CPU of the tab while it follows the stream.
	cpu := measureCPU(t, ctx, b, 8*time.Second)
	events, maxEvent := net.stream()
	t.Logf("steady state: %s; %d stream events, largest %d bytes", cpu, events, maxEvent)
	if maxEvent >= 4096 {
		t.Errorf("a stream event is %d bytes; budget 4 KiB", maxEvent)
	}

	shot := screenshot(t, ctx, b)
	dir := artifacts(t)
	path := filepath.Join(dir, "dashboard-kv-bound.png")
	must(t, os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot: %s", path)
	report, _ := json.MarshalIndent(map[string]any{
		"first_load_bytes": firstLoad.total, "first_load_requests": firstLoad.byURL,
		"cpu": cpu, "stream_events": events, "stream_event_max_bytes": maxEvent, "state": st,
	}, "", "  ")
	must(t, os.WriteFile(filepath.Join(dir, "dashboard-kv-bound.json"), report, 0o644))
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
    Evidence: [...document.querySelectorAll("#verdict-evidence li")].map((li) => li.textContent),
    Rows: [...document.querySelectorAll("#instances tbody tr")].map((tr) => tr.dataset.target),
    Big: ["big-p", "big-k", "big-d"].map((id) => document.querySelector("#" + id + " .v").textContent),
    Pixels: px,
  };
} catch (e) { return { Error: String(e) }; } })()`

type pageState struct {
	Ready, SSE, Points, Labels, Stage, Head, Error string
	Verdicts                                       string // the verdict band's stages, oldest first
	Evidence, Rows, Big                            []string
	Pixels                                         map[string]int
}

func (s pageState) ready() bool {
	if s.Ready != "1" || s.SSE != "open" {
		return false
	}
	for _, n := range s.counts() {
		if n < 5 {
			return false
		}
	}
	return true
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

// startPtdmon builds the binary and starts the demo (or sim + serve).
func startPtdmon(t *testing.T, ctx context.Context) string {
	t.Helper()
	root := moduleRoot(t)
	bin := filepath.Join(t.TempDir(), "ptdmon")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/ptdmon")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ptdmon: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "ptdmon", "demo.go")); err == nil {
		return run(t, ctx, "ptdmon demo: open ", bin, "demo", "-scenario", "kv-bound", "-seed", "1", "-listen", "127.0.0.1:0")
	}
	t.Log("cmd/ptdmon/demo.go does not exist yet: using ptdmon sim + ptdmon serve")
	cfg := filepath.Join(t.TempDir(), "ptdmon.yaml")
	sim := exec.CommandContext(ctx, bin, "sim", "-scenario", "kv-bound", "-seed", "1", "-config-out", cfg)
	sim.Stderr = &logWriter{t: t, prefix: "sim: "}
	must(t, sim.Start())
	t.Cleanup(func() { sim.Process.Kill(); sim.Wait() })
	for i := 0; ; i++ {
		if b, err := os.ReadFile(cfg); err == nil && strings.Contains(string(b), "targets:") {
			break
		}
		if i > 100 {
			t.Fatal("ptdmon sim wrote no config in 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return run(t, ctx, "ptdmon: serving on ", bin, "serve", "-config", cfg, "-listen", "127.0.0.1:0")
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
				found <- strings.TrimSpace(after)
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
	for time.Since(start) < limit && ctx.Err() == nil {
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
				return
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("no %q verdict within %v; last: %+v", stage, limit, last)
}

type browser struct {
	*cdp
	cmd *exec.Cmd
}

func startBrowser(t *testing.T, ctx context.Context) *browser {
	t.Helper()
	profile, err := os.MkdirTemp("", "ptdmon-chromium-")
	must(t, err)
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-quic", "--no-first-run", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--hide-scrollbars", "--user-data-dir="+profile,
		"--remote-debugging-port=0", "--window-size=1400,1600", "about:blank")
	// Its own process group, so that the zygote and renderers go with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		os.RemoveAll(profile)
	})
	wsBrowser, err := devtoolsURL(stderr, 20*time.Second)
	must(t, err)
	// The page target of about:blank.
	host := strings.TrimPrefix(strings.SplitN(wsBrowser, "/devtools/", 2)[0], "ws://")
	var list []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	for i := 0; i < 50; i++ {
		if getJSONQuiet("http://"+host+"/json/list", &list) == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range list {
		if p.Type == "page" {
			c, err := dialCDP(ctx, p.WS)
			must(t, err)
			t.Cleanup(c.Close)
			return &browser{cdp: c, cmd: cmd}
		}
	}
	t.Fatalf("no page target in %v", list)
	return nil
}

// netLog follows the Network domain: bytes per URL and the stream's
// messages.
type netLog struct {
	mu        sync.Mutex
	urls      map[string]string // requestId → URL
	bytes     map[string]float64
	events    int
	maxEvent  int
	streamIDs map[string]bool
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
	l := &netLog{urls: map[string]string{}, bytes: map[string]float64{}, streamIDs: map[string]bool{}}
	go func() {
		for ev := range b.events {
			var p struct {
				RequestID string `json:"requestId"`
				Request   struct {
					URL string `json:"url"`
				} `json:"request"`
				Encoded float64 `json:"encodedDataLength"`
				Data    string  `json:"data"`
			}
			json.Unmarshal(ev.Params, &p)
			l.mu.Lock()
			switch ev.Method {
			case "Network.requestWillBeSent":
				l.urls[p.RequestID] = p.Request.URL
			case "Network.loadingFinished":
				l.bytes[p.RequestID] = p.Encoded
			case "Network.eventSourceMessageReceived":
				l.events++
				// The event on the wire: its fields plus the SSE framing.
				if n := len(p.Data) + len("event: point\nid: 1795953179491\ndata: \n\n"); n > l.maxEvent {
					l.maxEvent = n
				}
			}
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *netLog) loaded() loadStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := loadStats{byURL: map[string]float64{}}
	for id, n := range l.bytes {
		u := l.urls[id]
		if i := strings.Index(u, "://"); i >= 0 {
			if j := strings.Index(u[i+3:], "/"); j >= 0 {
				u = u[i+3+j:]
			}
		}
		s.byURL[u] += n
		s.total += n
	}
	return s
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

func measureCPU(t *testing.T, ctx context.Context, b *browser, d time.Duration) cpuStats {
	t.Helper()
	metrics := func() map[string]float64 {
		var r struct {
			Metrics []struct {
				Name  string
				Value float64
			}
		}
		must(t, b.call(ctx, "Performance.getMetrics", nil, &r))
		m := map[string]float64{}
		for _, x := range r.Metrics {
			m[x.Name] = x.Value
		}
		return m
	}
	m0, p0, w0 := metrics(), rendererTicks(b.cmd.Process.Pid), time.Now()
	time.Sleep(d)
	m1, p1, w1 := metrics(), rendererTicks(b.cmd.Process.Pid), time.Now()
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

func screenshot(t *testing.T, ctx context.Context, b *browser) []byte {
	t.Helper()
	var lm struct {
		Content struct{ Width, Height float64 } `json:"cssContentSize"`
	}
	must(t, b.call(ctx, "Page.getLayoutMetrics", nil, &lm))
	h := math.Min(math.Max(lm.Content.Height, 800), 4000)
	var shot struct{ Data string }
	must(t, b.call(ctx, "Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": 1400, "height": h, "scale": 1},
	}, &shot))
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	must(t, err)
	return png
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
