package service

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/testutil"
	"github.com/ptdmon/ptdmon/internal/tui"
)

const bReq = 1 << 30 // B_request of the fake engines: 1 GiB

type runningService struct {
	base   string
	cancel context.CancelFunc
	done   chan error
}

func startService(t *testing.T, cfg *config.Config, kv kvsize.Request) *runningService {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	rs := &runningService{cancel: cancel, done: make(chan error, 1)}
	go func() {
		rs.done <- Run(ctx, cfg, Options{KVRequest: kv, Ready: func(a string) { ready <- a }})
	}()
	select {
	case a := <-ready:
		rs.base = "http://" + a
	case err := <-rs.done:
		t.Fatalf("service did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("service did not start in 10 s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-rs.done:
			if err != nil {
				t.Errorf("service stopped with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("service did not stop in 10 s")
		}
	})
	return rs
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal(get(t, http.DefaultClient, url), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func getText(t *testing.T, url string) string {
	t.Helper()
	return string(get(t, http.DefaultClient, url))
}

// eventually polls cond every 100 ms until it returns "", and fails the
// test with its last account of what is missing when limit has passed.
func eventually(t *testing.T, limit time.Duration, cond func() string) {
	t.Helper()
	testutil.Eventually(t, limit, 100*time.Millisecond, func() (bool, string) {
		why := cond()
		return why == "", why
	})
}

// Views of the API used by the tests (decoded independently of the ledger's types).
type stageJSON struct {
	Instant *float64          `json:"requests_per_second"`
	Window  *float64          `json:"requests_per_second_window"`
	Up      int               `json:"instances_up"`
	N       int               `json:"instances"`
	Absent  map[string]string `json:"absent"`
}

type pointJSON struct {
	Time          time.Time `json:"time"`
	Prefill       stageJSON `json:"prefill"`
	KV            stageJSON `json:"kv"`
	Decode        stageJSON `json:"decode"`
	GlobalKVBytes *float64  `json:"global_kv_bytes_total"`
}

type targetJSON struct {
	Name          string            `json:"name"`
	Up            bool              `json:"up"`
	LastError     string            `json:"last_error"`
	Failures      map[string]uint64 `json:"failures"`
	CounterResets uint64            `json:"counter_resets"`
}

func within(t *testing.T, what string, got *float64, want, tol float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s is absent, want %v", what, want)
		return
	}
	if math.Abs(*got-want) > tol*want {
		t.Errorf("%s = %.4f, want %.4f ± %.1f%%", what, *got, want, tol*100)
		return
	}
	t.Logf("%s = %.4f (truth %.4f, %+.3f%%)", what, *got, want, (*got-want)/want*100)
}

// TestRates runs the collector's pipeline in fake time (a synctest bubble,
// engines on a memNet) against vLLM and SGLang expositions whose counters
// advance at known rates, with jittered response times and one engine
// restart (counter reset). Each sample is stamped exactly at its reading, so
// every rate must match the truth to rounding.
func TestRates(t *testing.T) {
	synctest.Test(t, testRates)
}

func testRates(t *testing.T) {
	const jitter = 20 * time.Millisecond
	// Truth: prefill 20 + 10 + 5 req/s; decode the same; KV bytes from
	// FlagCX on p-vllm, SGLang's MB histogram on p-sglang, NIXL on d-nixl.
	n := newMemNet()
	pVLLM := memFake(t, n, "p-vllm:8000", jitter, 1, vllmBody("llama", 2, 20, "flagcx", bReq))
	pSGL := memFake(t, n, "p-sglang:30000", jitter, 2, sglangBody("prefill", "qwen", 10, bReq))
	pNIXL := memFake(t, n, "p-nixl:8000", jitter, 3, vllmBody("llama", 1, 5, "", 0))
	dVLLM := memFake(t, n, "d-vllm:8000", jitter, 4, vllmBody("llama", 1, 20, "", 0))
	dSGL := memFake(t, n, "d-sglang:30000", jitter, 5, sglangBody("decode", "qwen", 10, 0))
	dNIXL := memFake(t, n, "d-nixl:8000", jitter, 6, vllmBody("llama", 1, 5, "nixl", bReq))

	cfg := &config.Config{
		Interval: config.Duration{Duration: time.Second},
		Window:   config.Duration{Duration: 10 * time.Second},
		Targets: []config.Target{
			{Name: "p-vllm", URL: pVLLM.URL(), Role: "prefill"},
			{Name: "p-sglang", URL: pSGL.URL()}, // role from engine_type
			{Name: "p-nixl", URL: pNIXL.URL(), Role: "prefill", Engine: "vllm"},
			{Name: "d-vllm", URL: dVLLM.URL(), Role: "decode"},
			{Name: "d-sglang", URL: dSGL.URL(), Engine: "sglang"},
			{Name: "d-nixl", URL: dNIXL.URL(), Role: "decode"},
		},
	}
	rs := startBubble(t, cfg, kvsize.Request{Bytes: bReq, Basis: "flag"}, n)

	// The FlagCX prefill restarts 2.5 s in: refused connections, then counters from 0.
	time.Sleep(2500 * time.Millisecond)
	pVLLM.restart(400 * time.Millisecond)
	// Let a full 10 s window pass after the restart.
	time.Sleep(12500 * time.Millisecond)
	synctest.Wait()

	var snap struct {
		Point   pointJSON    `json:"point"`
		Targets []targetJSON `json:"targets"`
	}
	rs.getJSON(t, "/api/v1/snapshot", &snap)
	p := snap.Point
	// Counters are linear in time and each stamp is its reading's instant:
	// what is left is floating-point rounding.
	const exact = 1e-9
	within(t, "prefill req/s (10 s window)", p.Prefill.Window, 35, exact)
	within(t, "decode req/s (10 s window)", p.Decode.Window, 35, exact)
	within(t, "KV req/s (10 s window)", p.KV.Window, 35, exact)
	within(t, "prefill req/s (instant)", p.Prefill.Instant, 35, exact)
	within(t, "decode req/s (instant)", p.Decode.Instant, 35, exact)
	within(t, "KV req/s (instant)", p.KV.Instant, 35, exact)
	if p.Prefill.Up != 3 || p.Decode.Up != 3 || p.KV.N != 3 {
		t.Errorf("up prefill %d decode %d, kv instances %d; want 3, 3, 3", p.Prefill.Up, p.Decode.Up, p.KV.N)
	}

	var restarted targetJSON
	for _, tg := range snap.Targets {
		if tg.Name == "p-vllm" {
			restarted = tg
		}
	}
	// One restart resets each of its counter series once: per engine (dp 2)
	// the three finished reasons, the prompt tokens and the FlagCX bytes.
	if restarted.CounterResets != 2*5 {
		t.Errorf("p-vllm: %d series resets after one restart, want 10: %+v", restarted.CounterResets, restarted)
	}
	if restarted.Failures["refused"] == 0 {
		t.Errorf("p-vllm: the restart's refused scrapes are not recorded: %+v", restarted.Failures)
	}

	// The global KV counter never decreases, restart included, and over the
	// last 10 s it grows by the true KV bytes.
	var series struct {
		Points []pointJSON `json:"points"`
	}
	rs.getJSON(t, "/api/v1/series?instances=0", &series)
	var prev float64
	var last, tenAgo *pointJSON
	for i := range series.Points {
		q := &series.Points[i]
		if q.GlobalKVBytes == nil {
			continue
		}
		if *q.GlobalKVBytes < prev {
			t.Fatalf("global KV counter decreased at %v: %v → %v", q.Time, prev, *q.GlobalKVBytes)
		}
		prev = *q.GlobalKVBytes
		last = q
	}
	for i := range series.Points {
		q := &series.Points[i]
		if q.GlobalKVBytes != nil && last.Time.Sub(q.Time) <= 10*time.Second {
			tenAgo = q
			break
		}
	}
	if last == nil || tenAgo == nil || last.Time.Sub(tenAgo.Time) < 9*time.Second {
		t.Fatal("not enough points with a global KV counter")
	}
	got := (*last.GlobalKVBytes - *tenAgo.GlobalKVBytes) / last.Time.Sub(tenAgo.Time).Seconds() / bReq
	// A tick counts each engine up to its last sample before the tick: a
	// sample stamp moves by up to half the jitter (10 ms) at each end of 10 s.
	if math.Abs(got-35) > 0.002*35 {
		t.Errorf("global KV counter grows at %.4f req/s equivalent, want 35 ± 0.2%%", got)
	}

	// The terminal view reads the same API: its frame shows the same rates.
	ts, err := (&tui.Client{Base: rs.base, HTTP: rs.api}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var frame strings.Builder
	tui.Render(&frame, ts, nil, 120)
	for _, st := range []string{"Prefill", "KV", "Decode"} {
		line := ""
		for _, l := range strings.Split(frame.String(), "\n") {
			if strings.HasPrefix(l, st+" ") {
				line = l
				break
			}
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Errorf("terminal view has no %s line:\n%s", st, frame.String())
			continue
		}
		if f[2] != "35.00" {
			t.Errorf("terminal view: %s window %q, want 35.00", st, f[2])
		}
	}

	metrics := rs.getText(t, "/metrics")
	if !strings.Contains(metrics, `ptd_stage_requests_per_second{stage="kv",window="10s"}`) {
		t.Error("/metrics lacks the 10 s window rates")
	}
	checkMetrics(t, metrics)
}

// checkMetrics runs the real promtool over our /metrics output.
func checkMetrics(t *testing.T, body string) {
	t.Helper()
	for _, name := range []string{"ptd_stage_requests_per_second{stage=\"kv\",window=\"instant\"}", "flagcx_total_bytes_transferred_total", "ptd_requests_completed_total{", "ptd_target_up{"} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not installed (CI installs Debian's prometheus package)")
		}
		t.Log("promtool not installed; skipping promtool check metrics")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
