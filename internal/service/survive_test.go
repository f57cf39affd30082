package service

import (
	"math/rand"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/ledger"
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
// past the timeout, one serving 100 MB of garbage, one serving a malformed
// exposition and one restarting. The good targets keep exact rates; every
// failure is visible in /api/v1/targets and ptd_scrape_failures_total.
func TestServeSurvivesBadTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 7 s of real time")
	}
	// A port that refuses: listen, note the address, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()

	stop := make(chan struct{})
	defer close(stop)
	hanging := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		case <-time.After(30 * time.Second):
		}
	})
	garbage := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		rng := rand.New(rand.NewSource(1))
		for i := range chunk {
			chunk[i] = byte('!' + rng.Intn(90))
		}
		for i := 0; i < 100; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	malformed := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\" 1\n"))
	})
	good := startFake(t, 5*time.Millisecond, 7, vllmBody("llama", 1, 20, "flagcx", bReq))
	goodD := startFake(t, 5*time.Millisecond, 8, sglangBody("decode", "qwen", 10, 0))
	restarting := startFake(t, 5*time.Millisecond, 9, vllmBody("llama", 1, 5, "", 0))

	cfg := &config.Config{
		Interval:     config.Duration{Duration: 500 * time.Millisecond},
		Window:       config.Duration{Duration: 3 * time.Second},
		MaxBodyBytes: 16 << 20,
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
	rs := startService(t, cfg, ledger.KVRequest{Bytes: bReq, Source: "flag"})
	time.Sleep(2 * time.Second)
	restarting.restart(300 * time.Millisecond)
	time.Sleep(4500 * time.Millisecond)

	var snap struct {
		Point   pointJSON    `json:"point"`
		Targets []targetJSON `json:"targets"`
	}
	getJSON(t, rs.base+"/api/v1/snapshot", &snap)
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
	// fakes' counters are exact in time, so the tolerance is the sample
	// stamp's error on a loaded machine (tens of milliseconds in 3 s).
	within(t, "KV req/s from the good prefill", snap.Point.KV.Window, 20, 0.025)
	if snap.Point.Prefill.Window == nil || snap.Point.Prefill.Up != 1 || snap.Point.Prefill.N != 3 {
		t.Errorf("prefill stage: %+v", snap.Point.Prefill)
	} else {
		within(t, "prefill req/s with two of three prefill targets failing", snap.Point.Prefill.Window, 20, 0.025)
	}
	within(t, "decode req/s (good-d 10 + restarting 5)", snap.Point.Decode.Window, 15, 0.025)

	metrics := getText(t, rs.base+"/metrics")
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
