package service

import (
	"math/rand"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// serveFunc starts a loopback server with an arbitrary handler.
func serveFunc(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/metrics"
}

// TestServeSurvivesBadTargets: a target refusing connections, one hanging
// past the timeout, one serving a body past the size limit, one serving a
// malformed exposition and one restarting, in fake time. The good targets
// keep exact rates; every failure is visible in /api/v1/targets and
// ptd_scrape_failures_total.
func TestServeSurvivesBadTargets(t *testing.T) {
	synctest.Test(t, testServeSurvivesBadTargets)
}

func testServeSurvivesBadTargets(t *testing.T) {
	n := newMemNet()
	refused := "http://refused:8000/metrics" // nobody answers there
	stop := make(chan struct{})
	defer close(stop)
	hanging := n.add("hanging:8000", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		case <-time.After(30 * time.Second):
		}
	}))
	const limit = 4 << 20
	chunk := make([]byte, 1<<20)
	rng := rand.New(rand.NewSource(1))
	for i := range chunk {
		chunk[i] = byte('!' + rng.Intn(90))
	}
	garbage := n.add("garbage:8000", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range limit/len(chunk) + 1 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	malformed := n.add("malformed:8000", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\" 1\n"))
	}))
	good := memFake(t, n, "good-p:8000", 5*time.Millisecond, 7, vllmBody("llama", 1, 20, "flagcx", bReq))
	goodD := memFake(t, n, "good-d:30000", 5*time.Millisecond, 8, sglangBody("decode", "qwen", 10, 0))
	restarting := memFake(t, n, "restarting:8000", 5*time.Millisecond, 9, vllmBody("llama", 1, 5, "", 0))

	cfg := &config.Config{
		Interval:     config.Duration{Duration: 500 * time.Millisecond},
		Window:       config.Duration{Duration: 3 * time.Second},
		MaxBodyBytes: limit,
		Targets: []config.Target{
			{Name: "good-p", URL: good.URL(), Role: "prefill"},
			{Name: "good-d", URL: goodD.URL()},
			{Name: "restarting", URL: restarting.URL(), Role: "decode"},
			{Name: "refused", URL: refused, Role: "prefill"},
			{Name: "hanging", URL: hanging, Role: "prefill"},
			{Name: "garbage", URL: garbage, Role: "decode"},
			{Name: "malformed", URL: malformed, Role: "decode"},
		},
	}
	rs := startBubble(t, cfg, kvsize.Request{Bytes: bReq, Basis: "flag"}, n)
	time.Sleep(2 * time.Second)
	restarting.restart(300 * time.Millisecond)
	time.Sleep(4500 * time.Millisecond)
	synctest.Wait()

	var snap struct {
		Point   pointJSON    `json:"point"`
		Targets []targetJSON `json:"targets"`
	}
	rs.getJSON(t, "/api/v1/snapshot", &snap)
	byName := map[string]targetJSON{}
	for _, tg := range snap.Targets {
		byName[tg.Name] = tg
	}
	wantFail := map[string]string{"refused": "refused", "hanging": "timeout", "garbage": "body_too_large", "malformed": "parse"}
	for name, reason := range wantFail {
		tg := byName[name]
		if tg.Up || tg.Failures[reason] == 0 || tg.LastError == "" {
			t.Errorf("%s: up=%v failures=%v last_error=%q; want down with %s failures and an error", name, tg.Up, tg.Failures, tg.LastError, reason)
		}
	}
	for _, name := range []string{"good-p", "good-d", "restarting"} {
		if !byName[name].Up {
			t.Errorf("%s is down: %+v", name, byName[name])
		}
	}
	if byName["restarting"].CounterResets == 0 {
		t.Errorf("restarting: no reset recorded: %+v", byName["restarting"])
	}
	// Good targets keep their rates; the stage is partial, not zero. The
	// fakes' counters are exact in time and fake time stamps each sample at
	// its reading: only rounding is left.
	const exact = 1e-9
	within(t, "KV req/s from the good prefill", snap.Point.KV.Window, 20, exact)
	if snap.Point.Prefill.Window == nil || snap.Point.Prefill.Up != 1 || snap.Point.Prefill.N != 3 {
		t.Errorf("prefill stage: %+v", snap.Point.Prefill)
	} else {
		within(t, "prefill req/s with two of three prefill targets failing", snap.Point.Prefill.Window, 20, exact)
	}
	within(t, "decode req/s (good-d 10 + restarting 5)", snap.Point.Decode.Window, 15, exact)

	metrics := rs.getText(t, "/metrics")
	for _, want := range []string{
		`ptd_scrape_failures_total{reason="refused",target="refused"}`,
		`ptd_scrape_failures_total{reason="timeout",target="hanging"}`,
		`ptd_scrape_failures_total{reason="body_too_large",target="garbage"}`,
		`ptd_scrape_failures_total{reason="parse",target="malformed"}`,
		`ptd_target_up{engine="",role="prefill",target="refused"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	checkMetrics(t, metrics)
}
