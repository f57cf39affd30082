package tui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestClientDecodesTheAPI: the terminal view reads a real API server and
// gets back the ledger's own points, absences and reasons included.
func TestClientDecodesTheAPI(t *testing.T) {
	l := ledger.New(ledger.Config{KVRequest: kvsize.Request{Bytes: 1 << 30, Basis: "flag"}, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{
		{Name: "p0", URL: "http://10.0.0.1:8000/metrics", Role: engine.Prefill, Engine: engine.VLLM},
		{Name: "d0", URL: "http://10.0.0.2:8000/metrics", Role: engine.Decode, Engine: engine.VLLM},
	})
	start := time.Now().Add(-6 * time.Second).Truncate(time.Second)
	for k := 0; k < 6; k++ {
		at := start.Add(time.Duration(k) * time.Second)
		for i, name := range []string{"p0", "d0"} {
			o := &engine.Observation{Engine: engine.VLLM, Role: []engine.Role{engine.Prefill, engine.Decode}[i]}
			o.Counters = []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: 100 + 3*float64(k)}}
			if i == 0 {
				o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.KVBytes, Series: 2, Value: (1 << 30) * (100 + 3*float64(k))})
			}
			l.Record(ledger.Scrape{Target: name, Time: at, Obs: o})
		}
		l.Tick(at.Add(500 * time.Millisecond))
	}
	srv := httptest.NewServer((&api.Server{Ledger: l}).Handler())
	defer srv.Close()
	c := &Client{Base: srv.URL, HTTP: srv.Client()}

	snap, err := c.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := l.Latest()
	if want.Decode.TTFT.P50.OK() || !want.Prefill.Window.OK() {
		t.Fatal("the fixture should have both values and absences")
	}
	if snap.Point != nil && (snap.Point.Decode.WaitingBy.Capacity.OK() || snap.Point.Decode.WaitingBy.Deferred.OK()) {
		t.Errorf("waiting by reason, which the JSON does not carry, decoded as a value: %+v", snap.Point.Decode.WaitingBy)
	}
	if snap.Point != nil && snap.Point.Decode.Batch != nil && snap.Point.Decode.Batch.Step.OK() {
		t.Errorf("decode's step time, which the JSON does not carry, decoded as a value: %+v", snap.Point.Decode.Batch.Step)
	}
	if snap.Point == nil || !sameTimes(snap.Point, &want) || !reflect.DeepEqual(stripTimes(*snap.Point), stripTimes(want)) {
		t.Errorf("snapshot point differs from the ledger's:\n got %+v\nwant %+v", snap.Point, want)
	}
	if snap.KVRequest.Bytes != 1<<30 || snap.KVRequest.Basis != "flag" {
		t.Errorf("B_request %+v", snap.KVRequest)
	}
	hist, err := c.History(t.Context(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 6 || hist[5].Verdict == "" || !hist[5].Time.Equal(want.Time) || hist[5].Prefill.Window != want.Prefill.Window {
		t.Errorf("history: %d ticks, newest %+v", len(hist), hist[len(hist)-1])
	}
	var b strings.Builder
	Render(&b, snap, hist[:5], 100)
	if out := b.String(); !strings.Contains(out, "B_request 1.00 GiB (flag)") || !strings.Contains(out, "Prefill") {
		t.Errorf("frame:\n%s", out)
	}
}

// sameTimes compares the times with Equal: JSON keeps no monotonic reading.
func sameTimes(a, b *ledger.Point) bool {
	if !a.Time.Equal(b.Time) || len(a.Instances) != len(b.Instances) {
		return false
	}
	for i := range a.Instances {
		x, y := a.Instances[i], b.Instances[i]
		if !x.WindowFrom.Equal(y.WindowFrom) || !x.WindowTo.Equal(y.WindowTo) {
			return false
		}
	}
	return true
}

// stripTimes zeroes the times (compared with Equal), leaving the values.
func stripTimes(p ledger.Point) ledger.Point {
	p.Time = time.Time{}
	in := append([]ledger.InstancePoint(nil), p.Instances...)
	for i := range in {
		in[i].WindowFrom, in[i].WindowTo = time.Time{}, time.Time{}
		in[i].Pool = ""
		// Nor does an instance's deferred waiting travel (the advisor's
		// input): it reads absent, never 0.
		in[i].WaitingDeferred = ledger.Num{}
	}
	p.Instances = in
	// The pools travel in the snapshot's pool objects (and the instance
	// table's groups), not in its point; the stages' waiting by reason not
	// at all (it reads absent, never 0).
	p.Pools = nil
	// Nor do the link's bytes: the advice reads them, the API shows the
	// link's speed it derives.
	p.KV.LinkBytes, p.KV.Links = ledger.Num{}, 0
	p.Prefill.WaitingBy, p.Decode.WaitingBy = ledger.WaitingReasons{}, ledger.WaitingReasons{}
	// Nor decode's step time (the advice's evidence states it).
	if b := p.Decode.Batch; b != nil {
		c := *b
		c.Step = ledger.Num{}
		p.Decode.Batch = &c
	}
	return p
}

// TestErrorsHidePassword: a -url with a password never shows it, whether
// the server answers with an error or nothing listens.
func TestErrorsHidePassword(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	for _, base := range []string{srv.URL, closedURL} {
		base = strings.Replace(base, "http://", "http://watcher:s3cret@", 1)
		c := &Client{Base: base, HTTP: &http.Client{Timeout: 5 * time.Second}}
		_, err := c.Snapshot(context.Background())
		runErr := Run(context.Background(), Options{Client: c, Out: io.Discard, Once: true})
		for _, e := range []error{err, runErr} {
			if e == nil {
				t.Fatalf("%s: no error", base)
			}
			if strings.Contains(e.Error(), "s3cret") || !strings.Contains(e.Error(), "watcher:xxxxx@") {
				t.Errorf("error shows the password or not the redacted URL: %v", e)
			}
		}
	}
}
