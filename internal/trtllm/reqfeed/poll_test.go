package reqfeed

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

// fakeServer is a generation-A disaggregated server on loopback: its
// GET /perf_metrics answers each batch once and then forgets it, as
// TensorRT-LLM's does; its steady clock is the wall clock less k seconds.
type fakeServer struct {
	mu      sync.Mutex
	batches [][]reqtracetest.Timeline
	k       float64
	probes  bool
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/steady_clock_offset":
		if !f.probes {
			http.NotFound(w, r)
			return
		}
		now := float64(time.Now().UnixNano())/1e9 - f.k
		fmt.Fprintf(w, `{"receive_ts":%s,"transmit_ts":%s}`, num(now), num(now+0.0001))
	case "/perf_metrics":
		var items []string
		if len(f.batches) > 0 {
			for _, t := range f.batches[0] {
				items = append(items, t.DisaggA(reqtracetest.Offsets{}))
			}
			f.batches = f.batches[1:]
		}
		fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
	default:
		http.NotFound(w, r)
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// feed serves ts in two drained batches and polls three times; it returns
// the book's records by id, and the server's clock offset.
func feed(t *testing.T, ts []reqtracetest.Timeline, k float64, probes bool) (*journey.Book, map[string]journey.Record) {
	t.Helper()
	h := len(ts) / 2
	srv := httptest.NewServer(&fakeServer{batches: [][]reqtracetest.Timeline{ts[:h], ts[h:]}, k: k, probes: probes})
	t.Cleanup(srv.Close)
	l := journey.NewBook(0)
	p := &Poller{URL: srv.URL + "/perf_metrics", Pool: "llama", Client: srv.Client(), Book: l}
	for range 3 {
		if err := p.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if st := p.Stats(); st.Records != int64(len(ts)) || st.Errors != 0 {
		t.Fatalf("stats %+v, want %d records and no error", st, len(ts))
	}
	got := map[string]journey.Record{}
	for _, r := range l.Records() {
		got[r.ID] = r
	}
	if len(got) != len(ts) {
		t.Fatalf("%d distinct records, want %d", len(got), len(ts))
	}
	return l, got
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Each request's phases, id and arrival equal the timeline's truth.
func TestPollPhasesEqualTruth(t *testing.T) {
	now := float64(time.Now().UnixNano()) / 1e9
	const k = 1.5e9 // wall − the server's steady clock
	ts := reqtracetest.Timelines(40, 7, now-k-60)
	_, got := feed(t, ts, k, true)
	for _, tl := range ts {
		id := strconv.FormatUint(tl.ID, 10)
		r, ok := got[id]
		if !ok {
			t.Fatalf("request %s missing (ids must stay exact above 2^53)", id)
		}
		w := tl.Want()
		for ph, want := range map[journey.Phase]float64{journey.PhaseQueue: w.Queue, journey.PhasePrefill: w.Prefill,
			journey.PhaseKVTransfer: w.KV, journey.PhaseDecode: w.Decode} {
			if v, ok := r.Phase(ph); !ok || !near(v, want, 1e-6) {
				t.Errorf("%s %s = %v (%v), want %v", id, ph, v, ok, want)
			}
		}
		if !near(r.TTFT, w.TTFT, 1e-6) || !near(r.E2E, w.E2E, 1e-6) {
			t.Errorf("%s ttft, e2e = %v, %v, want %v, %v", id, r.TTFT, r.E2E, w.TTFT, w.E2E)
		}
		if _, ok := r.Phase(journey.PhaseDecodeQueue); ok || r.Absent[journey.PhaseDecodeQueue] == "" {
			t.Errorf("%s decode_queue should be absent with a reason: %v", id, r.Absent)
		}
		// The probe is on loopback: its delay, and so the error, is small.
		if arr := seconds(r.Arrival); !near(arr, tl.DisaggArrival+k, 0.05) {
			t.Errorf("%s arrival %.6f, want %.6f", id, arr, tl.DisaggArrival+k)
		}
		if r.Legs != "prefill+decode" || r.PrefillInstance != reqtracetest.CtxServer || r.DecodeInstance != reqtracetest.GenServer || r.Pool != "llama" {
			t.Errorf("%s legs %q instances %q %q pool %q", id, r.Legs, r.PrefillInstance, r.DecodeInstance, r.Pool)
		}
	}
}

// Without the probe endpoint, arrivals are never placed earlier than they
// were, nor later than the poll that read them; within one poll's answer
// their spacing stays exact.
func TestPollWithoutProbe(t *testing.T) {
	now := float64(time.Now().UnixNano()) / 1e9
	const k = 1.2e9
	ts := reqtracetest.Timelines(20, 3, now-k-5)
	_, got := feed(t, ts, k, false)
	end := float64(time.Now().UnixNano()) / 1e9
	h := len(ts) / 2
	for i, tl := range ts {
		r := got[strconv.FormatUint(tl.ID, 10)]
		arr := seconds(r.Arrival)
		if arr < tl.DisaggArrival+k-1e-6 || arr > end {
			t.Errorf("%d arrival %.6f, want from the true %.6f to the poll %.6f", tl.ID, arr, tl.DisaggArrival+k, end)
		}
		first := ts[0]
		if i >= h {
			first = ts[h]
		}
		f := got[strconv.FormatUint(first.ID, 10)]
		if d := r.Arrival.Sub(f.Arrival).Seconds(); !near(d, tl.DisaggArrival-first.DisaggArrival, 1e-5) {
			t.Errorf("%d spacing %.6f, want %.6f", tl.ID, d, tl.DisaggArrival-first.DisaggArrival)
		}
	}
}

// The API lists the engine's requests with the engine's ids.
func TestPollServedByAPI(t *testing.T) {
	now := float64(time.Now().UnixNano()) / 1e9
	ts := reqtracetest.Timelines(10, 11, now-100)
	l, _ := feed(t, ts, 0, true)
	as := &api.Server{Requests: l, Ledger: ledger.New(ledger.Config{Window: 5 * time.Second})}
	srv := httptest.NewServer(as.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/requests?pool=llama&limit=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body api.RequestsResponse
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Total != len(ts) {
		t.Fatalf("total %d, want %d", body.Total, len(ts))
	}
	want := map[string]float64{}
	for _, tl := range ts {
		want[strconv.FormatUint(tl.ID, 10)] = tl.Want().Prefill
	}
	for _, r := range body.Requests {
		if p, ok := want[r.ID]; !ok || !near(r.Phases[journey.PhasePrefill], p, 1e-6) {
			t.Errorf("request %q prefill %v, want %v (known %v)", r.ID, r.Phases[journey.PhasePrefill], p, ok)
		}
	}
}
