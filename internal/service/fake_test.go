package service

import (
	"fmt"
	"math"
	"math/rand"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEngine serves an exposition whose counters are exact functions of
// time, so the true rate of every counter is known. It listens on loopback
// (startFake) or answers on a memNet (memFake), where a synctest bubble
// gives it fake time.
type fakeEngine struct {
	t      *testing.T
	render func(elapsed float64) string
	jitter time.Duration

	addr string // on loopback
	net  *memNet
	host string // on net

	mu    sync.Mutex
	start time.Time // counters are 0 here; moved by a restart
	srv   *http.Server
	rng   *rand.Rand
	reads []fakeRead
}

// fakeRead is one reading of the counters: when, and the seconds since the
// (re)start they were rendered for.
type fakeRead struct {
	at      time.Time
	elapsed float64
}

func newFake(t *testing.T, jitter time.Duration, seed int64, render func(elapsed float64) string) *fakeEngine {
	f := &fakeEngine{t: t, render: render, jitter: jitter, rng: rand.New(rand.NewSource(seed))}
	f.start = time.Now().Add(-100 * time.Second) // counters already well above 0
	return f
}

func startFake(t *testing.T, jitter time.Duration, seed int64, render func(elapsed float64) string) *fakeEngine {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := newFake(t, jitter, seed, render)
	f.addr = ln.Addr().String()
	f.serve(ln)
	t.Cleanup(func() { f.mu.Lock(); f.srv.Close(); f.mu.Unlock() })
	return f
}

// memFake answers as host on n.
func memFake(t *testing.T, n *memNet, host string, jitter time.Duration, seed int64, render func(elapsed float64) string) *fakeEngine {
	f := newFake(t, jitter, seed, render)
	f.net, f.host = n, host
	n.add(host, http.HandlerFunc(f.handle))
	return f
}

func (f *fakeEngine) URL() string {
	if f.net != nil {
		return "http://" + f.host + "/metrics"
	}
	return "http://" + f.addr + "/metrics"
}

func (f *fakeEngine) serve(ln net.Listener) {
	f.srv = &http.Server{Handler: http.HandlerFunc(f.handle)}
	go f.srv.Serve(ln)
}

func (f *fakeEngine) handle(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	d := time.Duration(f.rng.Int63n(int64(f.jitter) + 1))
	f.mu.Unlock()
	// Half the jitter before reading the counters and half after, so the
	// reading sits at the midpoint of the exchange, as the collector assumes.
	time.Sleep(d / 2)
	f.mu.Lock()
	now := time.Now()
	el := now.Sub(f.start).Seconds()
	f.reads = append(f.reads, fakeRead{at: now, elapsed: el})
	f.mu.Unlock()
	body := f.render(el)
	time.Sleep(d / 2)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprint(w, body)
}

// readNear returns the reading nearest to at: for a sample's stamp, the
// reading its exchange served.
func (f *fakeEngine) readNear(at time.Time) (fakeRead, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var best fakeRead
	off := time.Duration(math.MaxInt64)
	for _, r := range f.reads {
		if d := r.at.Sub(at).Abs(); d < off {
			best, off = r, d
		}
	}
	return best, off
}

// restart stops the engine (connections refused) for down, then serves
// again at the same address with every counter back at 0. Only an engine
// on a memNet restarts: the tests about restarts run in fake time.
func (f *fakeEngine) restart(down time.Duration) {
	if f.net == nil {
		f.t.Fatal("restart of an engine on loopback")
	}
	f.net.set(f.host, nil)
	time.Sleep(down)
	f.mu.Lock()
	f.start = time.Now()
	f.mu.Unlock()
	f.net.set(f.host, http.HandlerFunc(f.handle))
}

// vllmBody renders a vLLM instance completing rps requests per second over
// dp engines, with FlagCX (prefill) or NIXL (decode) bytes when bytesPerReq > 0.
func vllmBody(model string, dp int, rps float64, connector string, bytesPerReq float64) func(float64) string {
	return func(el float64) string {
		var b strings.Builder
		lbl := func(e int) string { return fmt.Sprintf(`engine="%d",model_name="%s"`, e, model) }
		b.WriteString("# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\n")
		for e := 0; e < dp; e++ {
			fmt.Fprintf(&b, "vllm:num_requests_running{%s} %d.0\n", lbl(e), 4+e)
		}
		b.WriteString("# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
		for e := 0; e < dp; e++ {
			share := rps / float64(dp) * el
			// Completions split over reasons; aborts grow too and must not count.
			fmt.Fprintf(&b, "vllm:request_success_total{%s,finished_reason=\"abort\"} %v\n", lbl(e), 0.5*el)
			fmt.Fprintf(&b, "vllm:request_success_total{%s,finished_reason=\"length\"} %v\n", lbl(e), 0.75*share)
			fmt.Fprintf(&b, "vllm:request_success_total{%s,finished_reason=\"stop\"} %v\n", lbl(e), 0.25*share)
		}
		b.WriteString("# HELP vllm:request_success_created Count of successfully processed requests.\n# TYPE vllm:request_success_created gauge\n")
		for e := 0; e < dp; e++ {
			fmt.Fprintf(&b, "vllm:request_success_created{%s,finished_reason=\"stop\"} 1.7537953269352946e+09\n", lbl(e))
		}
		b.WriteString("# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n# TYPE vllm:prompt_tokens_total counter\n")
		for e := 0; e < dp; e++ {
			fmt.Fprintf(&b, "vllm:prompt_tokens_total{%s} %v\n", lbl(e), 8192*rps/float64(dp)*el)
		}
		if bytesPerReq > 0 {
			switch connector {
			case "flagcx":
				b.WriteString("# HELP vllm:flagcx_total_bytes_transferred_total Total bytes.\n# TYPE vllm:flagcx_total_bytes_transferred_total counter\n")
				for e := 0; e < dp; e++ {
					fmt.Fprintf(&b, "vllm:flagcx_total_bytes_transferred_total{%s} %v\n", lbl(e), bytesPerReq*rps/float64(dp)*el)
				}
			case "nixl":
				b.WriteString("# HELP vllm:nixl_bytes_transferred Histogram of bytes transferred per NIXL KV Cache transfers.\n# TYPE vllm:nixl_bytes_transferred histogram\n")
				for e := 0; e < dp; e++ {
					n := rps / float64(dp) * el * 4 // four rank-level transfers per request
					fmt.Fprintf(&b, "vllm:nixl_bytes_transferred_bucket{%s,le=\"+Inf\"} %v\n", lbl(e), n)
					fmt.Fprintf(&b, "vllm:nixl_bytes_transferred_count{%s} %v\n", lbl(e), n)
					fmt.Fprintf(&b, "vllm:nixl_bytes_transferred_sum{%s} %v\n", lbl(e), bytesPerReq*rps/float64(dp)*el)
				}
			}
		}
		return b.String()
	}
}

// sglangBody renders an SGLang instance (multiprocess style) whose two TP
// ranks both report the scheduler series; prefill exports the KV MB histogram.
func sglangBody(role, model string, rps, bytesPerReq float64) func(float64) string {
	return func(el float64) string {
		var b strings.Builder
		for tp := 0; tp < 2; tp++ {
			s := fmt.Sprintf(`engine_type="%s",model_name="%s",pp_rank="0",tp_rank="%d"`, role, model, tp)
			if tp == 0 {
				b.WriteString("# HELP sglang:num_running_reqs The number of running requests.\n# TYPE sglang:num_running_reqs gauge\n")
			}
			fmt.Fprintf(&b, "sglang:num_running_reqs{%s} 8.0\n", s)
		}
		if role == "prefill" && bytesPerReq > 0 {
			b.WriteString("# HELP sglang:kv_transfer_total_mb The total transferred MB of a request.\n# TYPE sglang:kv_transfer_total_mb histogram\n")
			for tp := 0; tp < 2; tp++ {
				s := fmt.Sprintf(`engine_type="%s",model_name="%s",pp_rank="0",tp_rank="%d"`, role, model, tp)
				n := rps * el
				fmt.Fprintf(&b, "sglang:kv_transfer_total_mb_bucket{%s,le=\"+Inf\"} %v\n", s, n)
				fmt.Fprintf(&b, "sglang:kv_transfer_total_mb_count{%s} %v\n", s, n)
				fmt.Fprintf(&b, "sglang:kv_transfer_total_mb_sum{%s} %v\n", s, n*bytesPerReq/(1<<20))
			}
		}
		t := fmt.Sprintf(`engine_type="%s",model_name="%s"`, role, model)
		b.WriteString("# HELP sglang:num_requests_total Number of requests processed.\n# TYPE sglang:num_requests_total counter\n")
		fmt.Fprintf(&b, "sglang:num_requests_total{%s} %v\n", t, rps*el)
		return b.String()
	}
}
