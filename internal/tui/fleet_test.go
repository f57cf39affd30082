package tui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// fleetLedger is n vLLM and SGLang instances over 8 ticks completing 5
// req/s each: every 50th is down and every 50th (offset by 7) stalled,
// with requests running and a completion counter that stops.
func fleetLedger(t testing.TB, n int) (*ledger.Ledger, []string, []string) {
	t.Helper()
	l := ledger.New(ledger.Config{KVRequest: kvsize.Request{Bytes: 1 << 30, Basis: "flag"}, Window: 5 * time.Second})
	infos := make([]engine.Target, n)
	var down, stalled []string
	for i := range infos {
		eng := []engine.Engine{engine.VLLM, engine.SGLang}[i%2]
		role := []engine.Role{engine.Prefill, engine.Decode}[(i/2)%2]
		infos[i] = engine.Target{Name: fmt.Sprintf("%s-%s%03d", eng, role[:1], i/4), URL: "http://10.0.0.1:8000/metrics", Role: role, Engine: eng}
		switch i % 50 {
		case 0:
			down = append(down, infos[i].Name)
		case 7:
			stalled = append(stalled, infos[i].Name)
		}
	}
	l.SetTargets(infos)
	start := time.Now().Add(-8 * time.Second).Truncate(time.Second)
	for k := 0; k < 8; k++ {
		now := start.Add(time.Duration(k) * time.Second)
		for i, in := range infos {
			if i%50 == 0 && k >= 5 {
				l.Record(ledger.Scrape{Target: in.Name, Time: now, Err: errors.New("dial tcp 10.0.0.1:8000: connect: connection refused"), Reason: scrape.ReasonRefused})
				continue
			}
			done := 100 + 5*float64(k)
			if i%50 == 7 {
				done = 100
			}
			o := &engine.Observation{Engine: in.Engine, Role: in.Role}
			o.Counters = []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: done}}
			o.Gauges[engine.Running.GaugeIndex()], o.HasGauges[engine.Running.GaugeIndex()] = 4, true
			o.Gauges[engine.Waiting.GaugeIndex()], o.HasGauges[engine.Waiting.GaugeIndex()] = 1, true
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Obs: o})
		}
		l.Tick(now.Add(500 * time.Millisecond))
	}
	return l, down, stalled
}

// TestTopAtFleetSize: with 400 instances, one frame of top fits the
// terminal, sums the groups, lists the down and stalled instances first,
// and the refresh downloads a few kilobytes, not every instance.
func TestTopAtFleetSize(t *testing.T) {
	l, down, stalled := fleetLedger(t, 400)
	var sent atomic.Int64
	h := (&api.Server{Ledger: l}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		sent.Add(cw.n)
	}))
	defer srv.Close()
	c := &Client{Base: srv.URL, HTTP: srv.Client()}
	var out bytes.Buffer
	const height, width = 60, 80
	if err := Run(t.Context(), Options{Client: c, Out: &out, Once: true, Width: width, Height: height, Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	frameBytes := sent.Load()
	frame := out.String()
	lines := strings.Split(strings.TrimSuffix(frame, "\n"), "\n")
	if len(lines) > height {
		t.Errorf("frame of %d lines for a %d-line terminal:\n%s", len(lines), height, frame)
	}
	for _, line := range lines {
		if n := len([]rune(line)); n > width {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	for _, want := range []string{
		"vllm/prefill", "vllm/decode", "sglang/prefill", "sglang/decode",
		fmt.Sprintf("400 instances: %d down, %d stalled, 0 queued, 0 slow; the worst", len(down), len(stalled)),
		slices.Min(down) + ": dial tcp 10.0.0.1:8000: connect: connection refused",
		// Samples 1 s apart inside W = 5 s: 4 s, 20 completions at 5 req/s.
		"stalled: 0 completions in 4 s, peers' median 20",
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame lacks %q:\n%s", want, frame)
		}
	}
	// The rows start with every down instance, then the stalled ones.
	var rows []string
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) >= 4 && (f[3] == "DOWN" || f[3] == "stalled" || f[3] == "ok") {
			rows = append(rows, f[0]+" "+f[3])
		}
	}
	if len(rows) < len(down)+2 || len(rows) >= 400 {
		t.Fatalf("%d instance rows:\n%s", len(rows), frame)
	}
	for i, r := range rows[:len(down)+2] {
		want := "DOWN"
		if i >= len(down) {
			want = "stalled"
		}
		if !strings.HasSuffix(r, " "+want) {
			t.Errorf("row %d is %q, want a %s instance", i, r, want)
		}
	}
	// Into a pipe with no height, the worst 50.
	t.Setenv("LINES", "")
	var piped bytes.Buffer
	if err := Run(t.Context(), Options{Client: c, Out: &piped, Once: true, Width: width, Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(piped.String(), " ok "); n != 50-len(down)-len(stalled) || !strings.Contains(piped.String(), "the worst 50 shown") {
		t.Errorf("piped frame: %d ok rows, want the worst 50 in all:\n%s", n, piped.String())
	}
	// A frame reads the history, the stages, the advice and one page of
	// instances: far less than the snapshot of every instance.
	_, full := fetchSize(t, srv.URL+"/api/v1/snapshot")
	t.Logf("one frame: %d B; the full snapshot alone: %d B", frameBytes, full)
	if frameBytes > 64<<10 || frameBytes*4 > int64(full) {
		t.Errorf("a frame read %d B (the full snapshot is %d B)", frameBytes, full)
	}
}

type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func fetchSize(t *testing.T, url string) (int, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Len()
}

// TestDrawFleetTable: the table's rows keep the server's order, fill the
// height with their notes, and say how many of how many are shown.
func TestDrawFleetTable(t *testing.T) {
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	s.Point.Instances, s.Targets = nil, nil // as snapshot?instances=0 sends it
	row := func(name, status string, flags ...string) api.InstanceRow {
		v := fmt.Sprintf(`{"target":%q,"role":"decode","engine":"vllm","up":%v,"requests_per_second_window":0.5,"running":3,"waiting":7,"kv_bytes_per_second_window":null}`, name, status != "down")
		return api.InstanceRow{Name: name, Role: "decode", Engine: "vllm", Up: status != "down", Status: status, Flags: flags, Values: []byte(v)}
	}
	w := 2.5
	table := &api.InstanceTable{Total: 300, Matched: 300, Counts: map[string]int{"down": 1, "stalled": 1, "queued": 0, "slow": 0},
		Groups: []api.InstanceGroup{{ID: "vllm/decode", Instances: 300, Up: 299, Down: 1, Stalled: 1, Flagged: 2, Window: &w}},
		Rows: []api.InstanceRow{
			row("d-b", "down", "down: last scrape failed: GET http://d-b/metrics: Get \"http://d-b/metrics\": connection refused"),
			row("d-a", "stalled", "stalled: 0 completions in 5 s, peers' median 12"),
			row("d-c", "ok"), row("d-d", "ok"), row("d-e", "ok"), row("d-f", "ok"), row("d-g", "ok"),
		}}
	f := func(height int, wantRows []string, want ...string) {
		t.Helper()
		var b strings.Builder
		Draw(&b, Frame{Snap: &s, Table: table, Height: height}, 80)
		out := b.String()
		if n := strings.Count(out, "\n"); height > 0 && n > height {
			t.Errorf("height %d: %d lines:\n%s", height, n, out)
		}
		var got []string
		for l := range strings.Lines(out) {
			if strings.HasPrefix(l, "d-") {
				got = append(got, strings.Fields(l)[0])
			}
		}
		if strings.Join(got, " ") != strings.Join(wantRows, " ") {
			t.Errorf("height %d: rows %v, want %v:\n%s", height, got, wantRows, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("height %d: frame lacks %q:\n%s", height, w, out)
			}
		}
	}
	var top strings.Builder
	Draw(&top, Frame{Snap: &s}, 80)
	base := strings.Count(top.String(), "\n") - 2 // the frame without its (empty) instance table
	f(0, []string{"d-b", "d-a", "d-c", "d-d", "d-e", "d-f", "d-g"}, "300 instances: 1 down, 1 stalled, 0 queued, 0 slow; the worst 7 shown",
		"  d-b: GET http://d-b/metrics: connection refused", "  d-a: stalled: 0 completions in 5 s, peers' median 12", "vllm/decode")
	// The group lines (3), counts (2) and table head (2) take 7 lines;
	// 2 flagged rows take 4 more, each ok row 1.
	f(base+7+4+2, []string{"d-b", "d-a", "d-c", "d-d"}, "the worst 4 shown")
	f(base+7+3, []string{"d-b"}, "the worst 1 shown")
}

func TestTableAllDown(t *testing.T) {
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	table := &api.InstanceTable{Total: 2, Counts: map[string]int{"down": 2},
		Rows: []api.InstanceRow{{Name: "p0", Status: "down", LastError: `GET http://p0/metrics: Get "http://p0/metrics": connection refused`}, {Name: "p1", Status: "down"}}}
	var b strings.Builder
	Draw(&b, Frame{Snap: &s, Table: table}, 80)
	if !strings.Contains(b.String(), "ALL 2 TARGETS DOWN\n  p0: GET http://p0/metrics: connection refused\n") {
		t.Errorf("frame:\n%s", b.String())
	}
}

// BenchmarkDrawFleet5000 draws one 80×50 frame of a 5,000-instance fleet
// from what the API serves for it: the render time of top's refresh.
func BenchmarkDrawFleet5000(b *testing.B) {
	l, _, _ := fleetLedger(b, 5000)
	srv := httptest.NewServer((&api.Server{Ledger: l}).Handler())
	defer srv.Close()
	c := &Client{Base: srv.URL, HTTP: srv.Client()}
	snap, err := c.Stages(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	hist, err := c.History(b.Context(), time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	a, aerr := c.Advice(b.Context())
	const height = 50
	table, err := c.Instances(b.Context(), height)
	if err != nil {
		b.Fatal(err)
	}
	f := Frame{Snap: snap, History: hist, Advice: &AdviceResult{a, aerr}, Table: table, Height: height}
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		Draw(&out, f, 80)
	}
	b.SetBytes(int64(out.Len()))
	if n := strings.Count(out.String(), "\n"); n > height {
		b.Fatalf("%d lines", n)
	}
}
