package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

func body(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func getBody(t *testing.T, url string) (int, string) {
	req, _ := http.NewRequest("GET", url, nil)
	return body(t, req)
}

// A target at +Inf: every endpoint still answers a complete document.
func TestInfiniteValuesKeepTheAPIWhole(t *testing.T) {
	l := ledger.New(ledger.Config{KVRequest: kvsize.Request{Bytes: bReq}, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}, {Name: "p1", Role: engine.Prefill, Engine: engine.VLLM}})
	start := time.Now().Add(-10 * time.Second)
	for k := range 10 {
		now := start.Add(time.Duration(k) * time.Second)
		for i, name := range []string{"p0", "p1"} {
			o := &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill}
			v := float64(k * 10)
			if i == 0 {
				v = math.Inf(1)
			}
			o.Counters = []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: v}, {Metric: engine.KVBytes, Series: 2, Value: v * bReq}}
			o.Gauges[engine.Running.GaugeIndex()], o.HasGauges[engine.Running.GaugeIndex()] = v, true
			l.Record(ledger.Scrape{Target: name, Time: now, Obs: o})
		}
		l.Tick(now.Add(500 * time.Millisecond))
	}
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()
	for _, path := range []string{"/api/v1/targets", "/api/v1/snapshot", "/api/v1/series", "/api/v1/series?format=compact"} {
		code, b := getBody(t, srv.URL+path)
		if code != 200 || !json.Valid([]byte(b)) {
			t.Errorf("%s: %d, valid JSON %v: %.200s", path, code, json.Valid([]byte(b)), b)
		}
	}
	_, m := getBody(t, srv.URL+"/metrics")
	if strings.Contains(m, "NaN") || strings.Contains(m, " +Inf\n") {
		t.Errorf("/metrics carries a non-finite value:\n%s", m)
	}
	if !strings.Contains(m, `ptd_stage_requests_per_second{stage="prefill",window="5s"} 10`) {
		t.Errorf("/metrics lacks p1's 10 req/s as the prefill stage:\n%s", m)
	}
}

// An encoding error is a 500 with the error, logged by the configured
// logger, never a 200 with an empty body.
func TestEncodeErrorsAreAnsweredAndLogged(t *testing.T) {
	l, _ := cluster16(t, 3)
	var logged bytes.Buffer
	s := &Server{Ledger: withKV(l, kvsize.Request{Bytes: bReq, Basis: "flag", Detail: &kvsize.Result{TPWireFactor: math.NaN()}}), Logger: slog.New(slog.NewTextHandler(&logged, nil))}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	code, b := getBody(t, srv.URL+"/api/v1/snapshot")
	if code != 500 || !strings.Contains(b, "unsupported value") {
		t.Errorf("snapshot: %d %q", code, b)
	}
	if !strings.Contains(logged.String(), "unsupported value") {
		t.Errorf("configured logger got %q", logged.String())
	}
}

func TestSeriesBounds(t *testing.T) {
	l, _ := cluster16(t, 1200) // 20 minutes
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()
	for _, q := range []string{"last=NaN", "last=Inf", "last=+Inf", "last=-Inf", "last=0", "last=1e9", "last=3601"} {
		if code, _ := getBody(t, srv.URL+"/api/v1/series?"+q); code != 400 {
			t.Errorf("%s: %d, want 400", q, code)
		}
	}
	count := func(q string) (int, bool) {
		t.Helper()
		code, b := getBody(t, srv.URL+"/api/v1/series?instances=0&"+q)
		var s struct {
			Points []json.RawMessage
			More   bool
		}
		if code != 200 || json.Unmarshal([]byte(b), &s) != nil {
			t.Fatalf("%s: %d %.200s", q, code, b)
		}
		return len(s.Points), s.More
	}
	// Default: the newest 15 minutes.
	if n, more := count(""); n < 899 || n > 901 || more {
		t.Errorf("default range: %d points, more %v", n, more)
	}
	if n, _ := count("last=3600"); n != 1200 {
		t.Errorf("last=3600: %d points", n)
	}
	// since= from the start pages at MaxSeriesPoints.
	l2 := ledger.New(ledger.Config{History: MaxSeriesPoints + 200})
	l2.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill}})
	start := time.Now().Add(-2 * time.Hour)
	for k := range MaxSeriesPoints + 100 {
		l2.Tick(start.Add(time.Duration(k) * time.Second))
	}
	srv2 := httptest.NewServer((&Server{Ledger: l2}).Handler())
	defer srv2.Close()
	code, b := getBody(t, srv2.URL+"/api/v1/series?format=compact&instances=0&since="+start.Add(-time.Second).Format(time.RFC3339Nano))
	var cs struct {
		Points []json.RawMessage
		More   bool
	}
	if code != 200 || json.Unmarshal([]byte(b), &cs) != nil || len(cs.Points) != MaxSeriesPoints || !cs.More {
		t.Errorf("paged since: %d, %d points, more %v", code, len(cs.Points), cs.More)
	}
}

func TestAllowHosts(t *testing.T) {
	h := AllowHosts([]string{"localhost", "ptd.example:9433"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv := httptest.NewServer(h)
	defer srv.Close()
	f := func(host string, want int) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		req.Host = host
		if code, _ := body(t, req); code != want {
			t.Errorf("Host %q: %d, want %d", host, code, want)
		}
	}
	f("localhost:9433", 200)
	f("LOCALHOST", 200)
	f("ptd.example:9433", 200)
	f("ptd.example:80", http.StatusMisdirectedRequest)
	f("attacker.example:9433", http.StatusMisdirectedRequest)
	f("127.0.0.1:9433", http.StatusMisdirectedRequest)
}

// CloseStreams ends a connected event stream at once.
func TestCloseStreamsEndsStreams(t *testing.T) {
	l, _ := cluster16(t, 3)
	s := &Server{Ledger: l}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	br.ReadString('\n') // retry:
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, br); ended <- err }()
	s.CloseStreams()
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Fatal("stream still open 2 s after CloseStreams")
	}
}
