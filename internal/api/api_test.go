package api

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

const bReq = 1 << 30

// cluster16 feeds a ledger with 16 instances for n ticks: 4 vLLM and 4
// SGLang on each side, one of them down with a long connection error, so
// the points have every kind of value and absence a real deployment has.
func cluster16(t *testing.T, n int) (*ledger.Ledger, time.Time) {
	t.Helper()
	l := ledger.New(ledger.Config{KVRequest: kvsize.Request{Bytes: bReq}, Window: 5 * time.Second})
	var infos []engine.Target
	for _, eng := range []engine.Engine{engine.VLLM, engine.SGLang} {
		for _, role := range []engine.Role{engine.Prefill, engine.Decode} {
			for i := 0; i < 4; i++ {
				name := fmt.Sprintf("%s-%s%d", eng, role[:1], i)
				infos = append(infos, engine.Target{Name: name, URL: "http://10.0.0.1:8000/metrics", Role: role, Engine: eng})
			}
		}
	}
	l.SetTargets(infos)
	start := time.Now().Add(-time.Duration(n) * time.Second)
	for k := 0; k < n; k++ {
		now := start.Add(time.Duration(k) * time.Second)
		for j, in := range infos {
			if in.Name == "sglang-d3" && k > n/2 {
				l.Record(ledger.Scrape{Target: in.Name, Time: now, Err: fmt.Errorf(`Get "http://10.200.31.17:30000/metrics": dial tcp 10.200.31.17:30000: connect: connection refused`), Reason: scrape.ReasonRefused})
				continue
			}
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Duration: 3 * time.Millisecond, Bytes: 9000, Obs: observe(in, j, float64(k))})
		}
		l.Tick(now.Add(500 * time.Millisecond))
	}
	return l, start
}

func observe(in engine.Target, j int, el float64) *engine.Observation {
	o := &engine.Observation{Engine: in.Engine, Role: in.Role, Model: "meta-llama/Llama-3.1-8B-Instruct"}
	rps := 1.7 + 0.13*float64(j)
	o.Counters = []engine.CounterValue{
		{Metric: engine.Completed, Series: 1, Value: 1000 + rps*el},
		{Metric: engine.PromptTokens, Series: 2, Value: 8192 * (1000 + rps*el)},
		{Metric: engine.GenerationTokens, Series: 3, Value: 256 * (1000 + rps*el)},
	}
	if in.Role == engine.Prefill {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.KVBytes, Series: 4, Value: bReq * (1000 + rps*el)})
	}
	set := func(m engine.Metric, v float64) { o.Gauges[m.GaugeIndex()], o.HasGauges[m.GaugeIndex()] = v, true }
	set(engine.Running, 7+float64(j%5))
	set(engine.Waiting, float64(j%3)+el/7)
	set(engine.KVUsage, 0.31+0.017*float64(j))
	if in.Engine == engine.SGLang {
		if in.Role == engine.Prefill {
			set(engine.QueueBootstrap, 2)
			set(engine.QueueInflight, 3+el/3)
		} else {
			set(engine.QueuePrealloc, 1)
			set(engine.QueueTransfer, 4)
		}
	}
	return o
}

func TestStreamEventUnder4KiB(t *testing.T) {
	l, _ := cluster16(t, 40)
	s := &Server{Ledger: withKV(l, kvsize.Request{Bytes: bReq, Basis: "flag"})}
	p, _ := l.Latest()
	if len(p.Instances) != 16 {
		t.Fatalf("%d instances, want 16", len(p.Instances))
	}
	var enc compactEncoder
	first, err := s.event(&enc, &p, false)
	if err != nil {
		t.Fatal(err)
	}
	next, _ := s.event(&enc, &p, false)
	full, _ := s.event(&compactEncoder{}, &p, true)
	t.Logf("SSE event for 16 instances: first %d B (with names), then %d B; verbose point %d B", len(first), len(next), len(full))
	if len(first) >= 4096 || len(next) >= 4096 {
		t.Errorf("compact event is %d / %d bytes; the budget is 4 KiB", len(first), len(next))
	}
	if len(next) >= len(first) {
		t.Errorf("names should go out once: first %d B, next %d B", len(first), len(next))
	}
	// The event must still say everything: values, absences with reasons,
	// and the verdict.
	var c struct {
		T  int64                   `json:"t"`
		NM [][3]string             `json:"nm"`
		P  []*float64              `json:"p"`
		I  [][]*float64            `json:"i"`
		A  map[string]string       `json:"a"`
		V  *struct{ Stage string } `json:"v"`
	}
	data := strings.TrimSuffix(string(first[strings.Index(string(first), "data: ")+6:]), "\n\n")
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("event data is not JSON: %v\n%s", err, data)
	}
	if len(c.NM) != 16 || len(c.I) != 16 || c.V == nil || c.V.Stage == "" || c.P[0] == nil {
		t.Fatalf("incomplete event: %s", data)
	}
	var down, noQueue bool
	for why, codes := range c.A {
		if strings.Contains(why, "connection refused") {
			down = true
			// The down instance is one row code, not thirteen.
			row := -1
			for i, nm := range c.NM {
				if nm[0] == "sglang-d3" {
					row = i
				}
			}
			if !strings.Contains(" "+codes+" ", fmt.Sprintf(" i%d ", row)) {
				t.Errorf("down instance codes %q", codes)
			}
		}
		if strings.Contains(why, "queue_bootstrap") {
			noQueue = true
		}
	}
	if !down || !noQueue {
		t.Errorf("absent reasons missing: %v", c.A)
	}
}

func TestAPI(t *testing.T) {
	l, _ := cluster16(t, 40)
	srv := httptest.NewServer((&Server{Ledger: withKV(l, kvsize.Request{Bytes: bReq, Basis: "flag"})}).Handler())
	defer srv.Close()

	var snap struct {
		Verdict *struct {
			Stage    string
			Headline string
			Evidence []string
			Samples  int
		}
	}
	get(t, srv.URL+"/api/v1/snapshot", &snap)
	if snap.Verdict == nil || snap.Verdict.Stage == "" || len(snap.Verdict.Evidence) == 0 || snap.Verdict.Samples < 10 {
		t.Fatalf("snapshot verdict: %+v", snap.Verdict)
	}

	var cs CompactSeries
	get(t, srv.URL+"/api/v1/series?format=compact&last=10", &cs)
	if cs.Format != CompactFormat || len(cs.Fields["i"]) != len(instanceFields) {
		t.Fatalf("compact series header: %+v", cs.Fields)
	}
	if n := len(cs.Points); n < 9 || n > 11 {
		t.Fatalf("last=10 gave %d points", n)
	}
	if !strings.Contains(string(cs.Points[0]), `"nm":`) || strings.Contains(string(cs.Points[1]), `"nm":`) {
		t.Errorf("names should be in the first point only")
	}
	if !strings.Contains(string(cs.Points[len(cs.Points)-1]), `"v":{"stage":`) {
		t.Errorf("newest point lacks the verdict")
	}

	// Verbose series, gzip-compressed when asked.
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/series?last=5", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("series not compressed: %v", resp.Header)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var full struct {
		Points  []json.RawMessage
		Verdict *struct{ Stage string }
	}
	if err := json.NewDecoder(zr).Decode(&full); err != nil {
		t.Fatal(err)
	}
	if full.Verdict == nil || len(full.Points) == 0 {
		t.Fatalf("verbose series: verdict %v, %d points", full.Verdict, len(full.Points))
	}

	for _, bad := range []string{"last=-1", "format=xml", "since=yesterday"} {
		if r, _ := http.Get(srv.URL + "/api/v1/series?" + bad); r.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", bad, r.StatusCode)
		}
	}

	metrics := text(t, srv.URL+"/metrics")
	if !strings.Contains(metrics, `ptd_bottleneck_stage{stage="`+snap.Verdict.Stage+`"} 1`) {
		t.Errorf("/metrics lacks ptd_bottleneck_stage for %q", snap.Verdict.Stage)
	}
}

func TestStreamSendsVerdictPerTick(t *testing.T) {
	l, start := cluster16(t, 20)
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	// The handler has subscribed before the response's headers arrive: each
	// tick is sent, and the next one is made once its event is read.
	events := 0
	for k := 0; k < 3; k++ {
		l.Tick(start.Add(time.Duration(21+k) * time.Second))
		line := ""
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				line = sc.Text()
				break
			}
		}
		if line == "" {
			break
		}
		events++
		var c map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line[6:]), &c); err != nil {
			t.Fatal(err)
		}
		if _, ok := c["v"]; !ok {
			t.Errorf("event %d has no verdict", events)
		}
		if _, ok := c["nm"]; ok != (events == 1) {
			t.Errorf("event %d: names present = %v", events, ok)
		}
	}
	if events < 3 {
		t.Fatalf("got %d events: %v", events, sc.Err())
	}
}

func get(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func text(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestSeriesWeight measures what the page downloads on load for 16
// instances: the compact series is what keeps the first load small.
func TestSeriesWeight(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	l, _ := cluster16(t, 300)
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()
	size := func(q string, gz bool) int {
		_, b := rawGet(t, srv.URL+"/api/v1/series?"+q, gz)
		return len(b)
	}
	for _, last := range []int{60, 300} {
		q := fmt.Sprintf("last=%d", last)
		compact, compactGz := size(q+"&format=compact", false), size(q+"&format=compact", true)
		full, fullGz := size(q, false), size(q, true)
		t.Logf("%4d s of 16 instances: compact %d B (gzip %d B), verbose %d B (gzip %d B)", last, compact, compactGz, full, fullGz)
		if perPoint := compactGz / last; perPoint > 600 {
			t.Errorf("compact series costs %d gzip bytes per point; budget 600", perPoint)
		}
	}
}

// withKV sets B_request on the ledger, its one owner, and returns it.
func withKV(l *ledger.Ledger, k kvsize.Request) *ledger.Ledger {
	l.SetKVRequest(k)
	return l
}
