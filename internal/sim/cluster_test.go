package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) Set(t time.Time) {
	f.mu.Lock()
	f.t = t
	f.mu.Unlock()
}

var testClient = &http.Client{Timeout: 5 * time.Second}

func scrape(t *testing.T, url string) ([]byte, error) {
	t.Helper()
	resp, err := testClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != textContentType {
		return nil, fmt.Errorf("content type %q", ct)
	}
	return io.ReadAll(resp.Body)
}

// startFake starts a cluster on a fake clock whose background reconciler
// never fires; tests call reconcile themselves.
func startFake(t *testing.T, sc Scenario) (*Cluster, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: testEpoch}
	c, err := Start(context.Background(), sc, Options{Seed: 4, Clock: clk.Now, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, clk
}

func TestClusterServesTruthfulCounters(t *testing.T) {
	c, clk := startFake(t, mixedScenario())
	targets := c.Targets()
	if len(targets) != 7 {
		t.Fatalf("targets = %d", len(targets))
	}
	for _, tg := range targets {
		if h, _, err := net.SplitHostPort(tg.URL[len("http://") : len(tg.URL)-len("/metrics")]); err != nil || h != "127.0.0.1" {
			t.Fatalf("target %s not on loopback: %s", tg.Name, tg.URL)
		}
	}
	for _, at := range []time.Duration{5 * time.Second, 30*time.Second + 17*time.Millisecond, 61 * time.Second} {
		now := testEpoch.Add(at)
		clk.Set(now)
		tr := c.TruthAt(now)
		if !tr.At.Equal(now) || tr.AtUnixNano != now.UnixNano() {
			t.Fatalf("truth at %v answered for %v", now, tr.At)
		}
		for _, tg := range targets {
			body, err := scrape(t, tg.URL)
			if err != nil {
				t.Fatalf("%s: %v", tg.Name, err)
			}
			got := exportedCounts(t, tg.Engine, string(tg.Role), parseExpo(t, body))
			want := roleCounts(string(tg.Role), tr.Instance(tg.Name).Exported)
			if got != want {
				t.Errorf("t=%v %s: exposition %+v != truth %+v", at, tg.Name, got, want)
			}
		}
		// Same answer over the control API.
		var js Truth
		getJSON(t, c.TruthURL()+"?at="+strconv.FormatInt(now.UnixNano(), 10), &js)
		if js.Totals != tr.Totals || len(js.Instances) != len(tr.Instances) {
			t.Fatalf("/truth?at= %+v != TruthAt %+v", js.Totals, tr.Totals)
		}
	}
	var iv IntervalTruth
	from, to := testEpoch.Add(10*time.Second), testEpoch.Add(60*time.Second)
	getJSON(t, fmt.Sprintf("%s?from=%d&to=%d", c.TruthURL(), from.UnixNano(), to.UnixNano()), &iv)
	d := iv.To.Totals.sub(iv.From.Totals)
	if iv.Seconds != 50 || iv.Rates.DecodePerSec != float64(d.DecodeCompleted)/50 ||
		iv.Rates.KVRequestsPerSec != float64(d.KVBytes)/50/float64(c.BytesPerRequest()) {
		t.Fatalf("interval truth inconsistent: %+v", iv)
	}
	if iv.Rates.PrefillPerSec < 4 || iv.Rates.PrefillPerSec > 10 {
		t.Fatalf("implausible prefill rate %v", iv.Rates.PrefillPerSec)
	}
	if len(iv.Busy) != len(iv.To.Instances) {
		t.Fatalf("busy fractions of %d instances, %d instances", len(iv.Busy), len(iv.To.Instances))
	}
	for i, b := range iv.Busy {
		in := iv.To.Instance(b.Name)
		want := (in.BusySeconds - iv.From.Instance(b.Name).BusySeconds) / (50 * float64(in.Engines))
		if b.Fraction != want || b.Fraction <= 0 || b.Fraction > 1 || b.Name != iv.To.Instances[i].Name {
			t.Errorf("busy %+v, want %v", b, want)
		}
	}
	resp, err := testClient.Get(c.TruthURL() + "?at=yesterday")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad ?at= gave %d", resp.StatusCode)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := testClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestClusterRestartOverHTTP(t *testing.T) {
	sc, _ := LoadScenario("restart")
	c, clk := startFake(t, sc)
	var url string
	for _, tg := range c.Targets() {
		if tg.Name == "vllm-p0" {
			url = tg.URL
		}
	}
	clk.Set(testEpoch.Add(19 * time.Second))
	body, err := scrape(t, url)
	if err != nil {
		t.Fatal(err)
	}
	before := exportedCounts(t, ptd.VLLM, RolePrefill, parseExpo(t, body))
	if before.PrefillCompleted == 0 {
		t.Fatal("no traffic before restart")
	}

	clk.Set(testEpoch.Add(21 * time.Second))
	c.reconcile()
	if _, err := scrape(t, url); err == nil {
		t.Fatal("scrape of a down instance succeeded")
	}
	tr := c.TruthAt(clk.Now()).Instance("vllm-p0")
	if tr.Up || tr.PrefillCompleted < before.PrefillCompleted {
		t.Fatalf("truth while down: %+v", tr)
	}

	clk.Set(testEpoch.Add(30 * time.Second))
	c.reconcile()
	body, err = scrape(t, url)
	if err != nil {
		t.Fatalf("instance did not come back on its port: %v", err)
	}
	after := exportedCounts(t, ptd.VLLM, RolePrefill, parseExpo(t, body))
	tr = c.TruthAt(clk.Now()).Instance("vllm-p0")
	if after.PrefillCompleted >= before.PrefillCompleted || after.KVBytes >= tr.KVBytes {
		t.Fatalf("counters did not restart from 0: before %+v after %+v", before, after)
	}
	if roleCounts(RolePrefill, tr.Exported) != after {
		t.Fatalf("after restart exposition %+v != truth.exported %+v", after, tr.Exported)
	}
	if tr.PrefillCompleted <= before.PrefillCompleted || tr.Restarts != 1 {
		t.Fatalf("truth not cumulative: %+v", tr)
	}
}

func TestClusterFlakyScrapes(t *testing.T) {
	sc := baseScenario()
	sc.Name = "flaky-test"
	sc.Faults = Faults{MalformedProb: 0.5, Instances: []string{"vllm-d0"}}
	c, clk := startFake(t, sc)
	clk.Set(testEpoch.Add(10 * time.Second))
	urls := map[string]string{}
	for _, tg := range c.Targets() {
		urls[tg.Name] = tg.URL
	}
	bad := 0
	for i := 0; i < 40; i++ {
		body, err := scrape(t, urls["vllm-d0"])
		if err != nil {
			t.Fatal(err)
		}
		if _, perr := parseQuiet(body); perr != nil {
			bad++
		}
		if b, _ := scrape(t, urls["vllm-d1"]); b == nil {
			t.Fatal("healthy instance failed")
		} else if _, perr := parseQuiet(b); perr != nil {
			t.Fatal("instance outside the fault list returned a malformed body")
		}
	}
	if bad < 8 || bad > 32 {
		t.Fatalf("%d of 40 scrapes malformed, want about half", bad)
	}
}

func TestClusterScrapeTimeoutAndClose(t *testing.T) {
	sc := baseScenario()
	sc.Faults = Faults{TimeoutProb: 1, Delay: time.Minute}
	c, err := Start(context.Background(), sc, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 200 * time.Millisecond}
	_, err = client.Get(c.Targets()[0].URL)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("want a client timeout, got %v", err)
	}
	// A hung handler must not keep Close from returning.
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked on a hung scrape")
	}
	if _, err := testClient.Get(c.Targets()[1].URL); err == nil {
		t.Fatal("instance still serving after Close")
	}
	if _, err := testClient.Get(c.TruthURL()); err == nil {
		t.Fatal("control server still serving after Close")
	}
}

func TestClusterContextCancelCloses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Start(ctx, baseScenario(), Options{Seed: 1, Tick: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		_, err := testClient.Get(c.TruthURL())
		return err != nil, "cluster still serving after context cancel"
	})
	c.Close()
}

func TestClusterSpeed(t *testing.T) {
	clk := &fakeClock{t: testEpoch}
	c, err := Start(context.Background(), baseScenario(), Options{Seed: 1, Clock: clk.Now, Speed: 10, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clk.Set(testEpoch.Add(6 * time.Second))
	tr := c.TruthAt(clk.Now())
	if tr.SimSeconds != 60 {
		t.Fatalf("6 wall seconds at speed 10 = %v simulated seconds", tr.SimSeconds)
	}
	if !tr.At.Equal(clk.Now()) {
		t.Fatalf("truth timestamp %v, want wall time %v", tr.At, clk.Now())
	}
}

func parseQuiet(body []byte) (int, error) {
	p := newParser()
	fams, err := p.TextToMetricFamilies(bytesReader(body))
	return len(fams), err
}
