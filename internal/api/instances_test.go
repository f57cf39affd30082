package api

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// rawGet GETs url over real HTTP, asking for gzip when gz, and returns
// the response and its body as sent.
func rawGet(t *testing.T, url string, gz bool) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// fetch is rawGet's status and body, decompressed when gzip was asked for
// (and checked to be compressed).
func fetch(t *testing.T, url string, gz bool) (int, []byte) {
	t.Helper()
	resp, b := rawGet(t, url, gz)
	if !gz || resp.StatusCode != 200 {
		return resp.StatusCode, b
	}
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET %s: not compressed: %v", url, resp.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if b, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestInstancesOverHTTP: the table's rows carry the snapshot's own
// encoding of each instance, its sums match the ledger's stage sums, and
// bad parameters are refused with a reason.
func TestInstancesOverHTTP(t *testing.T) {
	l, _ := cluster16(t, 20)
	infos := []engine.Target{}
	for _, ts := range l.Targets(time.Now()) {
		in := engine.Target{Name: ts.Name, URL: ts.URL, Role: engine.Role(ts.Role), Engine: engine.Engine(ts.Engine)}
		if ts.Name == "vllm-p2" {
			in.Labels = map[string]string{"model": "llama-8b"}
		}
		infos = append(infos, in)
	}
	l.SetTargets(infos)
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()

	var tb InstanceTable
	code, body := fetch(t, srv.URL+"/api/v1/instances?limit=500", false)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if err := json.Unmarshal(body, &tb); err != nil {
		t.Fatal(err)
	}
	p, _ := l.Latest()
	if tb.Total != 16 || tb.Matched != 16 || len(tb.Rows) != 16 || tb.T == nil || *tb.T != p.Time.UnixMilli() || tb.Window != 5 {
		t.Fatalf("table head: total %d matched %d rows %d t %v window %g", tb.Total, tb.Matched, len(tb.Rows), tb.T, tb.Window)
	}
	if tb.Counts["down"] != 1 || tb.Rows[0].Name != "sglang-d3" || tb.Rows[0].Status != "down" || !strings.Contains(tb.Rows[0].LastError, "connection refused") {
		t.Errorf("the down instance should come first with its error: counts %v, row %+v", tb.Counts, tb.Rows[0])
	}

	// Each row's values and reasons are the snapshot's instance, split.
	var snap struct {
		Point struct {
			Instances []map[string]json.RawMessage `json:"instances"`
		} `json:"point"`
	}
	get(t, srv.URL+"/api/v1/snapshot", &snap)
	want := map[string]map[string]json.RawMessage{}
	for _, in := range snap.Point.Instances {
		var name string
		json.Unmarshal(in["target"], &name)
		want[name] = in
	}
	for _, r := range tb.Rows {
		var got map[string]json.RawMessage
		if err := json.Unmarshal(r.Values, &got); err != nil {
			t.Fatalf("%s values: %v", r.Name, err)
		}
		w := want[r.Name]
		var absent map[string]string
		json.Unmarshal(w["absent"], &absent)
		delete(w, "absent")
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s values differ from the snapshot's:\n got %s\nwant %v", r.Name, r.Values, w)
		}
		reasons := map[string]string{}
		for k, v := range r.Reasons {
			if k != "model" {
				reasons[k] = v
			}
		}
		if len(reasons) != len(absent) || (len(absent) > 0 && !reflect.DeepEqual(reasons, absent)) {
			t.Errorf("%s reasons %v, want the snapshot's %v", r.Name, reasons, absent)
		}
		wantModel := "meta-llama/Llama-3.1-8B-Instruct" // from the exposition
		if r.Name == "vllm-p2" {
			wantModel = "llama-8b" // the configured label wins
		}
		if r.Model != wantModel {
			t.Errorf("%s model %q, want %q", r.Name, r.Model, wantModel)
		}
	}

	// Per role, the groups' sums are the ledger's stage sums.
	sum := map[string]float64{}
	for _, g := range tb.Groups {
		if g.Instances != 4 || g.Window == nil {
			t.Fatalf("group %s: %+v", g.ID, g)
		}
		sum[g.Key["role"]] += *g.Window
	}
	for role, st := range map[string]ledger.StagePoint{"prefill": p.Prefill, "decode": p.Decode} {
		if math.Abs(sum[role]-st.Window.V) > 1e-9*st.Window.V {
			t.Errorf("%s: groups sum to %g req/s, the stage is %g", role, sum[role], st.Window.V)
		}
	}

	// gzip when asked, the same table.
	_, plain := fetch(t, srv.URL+"/api/v1/instances?limit=5", false)
	_, zipped := fetch(t, srv.URL+"/api/v1/instances?limit=5", true)
	if !bytes.Equal(plain, zipped) {
		t.Errorf("gzip body differs:\n%s\n%s", plain, zipped)
	}

	for _, bad := range []string{"limit=9999", "sort=color", "status=sick", "by=host", "order=sideways", "offset=-3"} {
		code, body := fetch(t, srv.URL+"/api/v1/instances?"+bad, false)
		if code != 400 || strings.Count(strings.TrimSpace(string(body)), "\n") != 0 || !strings.Contains(string(body), strings.SplitN(bad, "=", 2)[0]) {
			t.Errorf("%s: %d %q, want 400 and one line naming it", bad, code, body)
		}
	}
	var small struct {
		Point     map[string]json.RawMessage `json:"point"`
		Targets   []any                      `json:"targets"`
		Verdict   map[string]any             `json:"verdict"`
		KVRequest map[string]any             `json:"kv_request_bytes"`
	}
	get(t, srv.URL+"/api/v1/snapshot?instances=0", &small)
	if _, ok := small.Point["instances"]; ok || small.Targets != nil || small.Verdict == nil || small.Point["prefill"] == nil {
		t.Errorf("snapshot?instances=0 should keep the stages and verdict only: %v", small)
	}
}

// TestStreamPicksInstances: ?instances=0 streams no instance, ?target=NAME
// only that one, with the same values the full stream sends for it.
func TestStreamPicksInstances(t *testing.T) {
	l, start := cluster16(t, 20)
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type event struct {
		T  int64        `json:"t"`
		NM [][3]string  `json:"nm"`
		P  []*float64   `json:"p"`
		I  [][]*float64 `json:"i"`
		V  *struct{ Stage string }
	}
	open := func(q string) *bufio.Scanner {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/stream"+q, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != 200 {
			t.Fatalf("stream%s: %s", q, resp.Status)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		// The handler writes its first line once it has subscribed.
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), "retry:") {
			t.Fatalf("stream%s: first line %q, %v", q, sc.Text(), sc.Err())
		}
		return sc
	}
	next := func(sc *bufio.Scanner) event {
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: ") {
				var e event
				if err := json.Unmarshal([]byte(line[6:]), &e); err != nil {
					t.Fatal(err)
				}
				return e
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return event{}
	}
	full, none, one := open(""), open("?instances=0"), open("?target=vllm-p1")
	l.Tick(start.Add(21 * time.Second))
	f, n, o := next(full), next(none), next(one)
	if f.T != n.T || f.T != o.T || len(f.I) != 16 {
		t.Fatalf("events at %d/%d/%d, %d instances", f.T, n.T, o.T, len(f.I))
	}
	if len(n.I) != 0 || len(n.NM) != 0 || n.V == nil || !reflect.DeepEqual(n.P, f.P) {
		t.Errorf("instances=0: %d instances, names %v, stages equal %v", len(n.I), n.NM, reflect.DeepEqual(n.P, f.P))
	}
	row := -1
	for i, nm := range f.NM {
		if nm[0] == "vllm-p1" {
			row = i
		}
	}
	if len(o.NM) != 1 || o.NM[0] != f.NM[row] || len(o.I) != 1 || !reflect.DeepEqual(o.I[0], f.I[row]) || !reflect.DeepEqual(o.P, f.P) {
		t.Errorf("target=vllm-p1: names %v, rows %v; want %v %v", o.NM, o.I, f.NM[row], f.I[row])
	}

	for q, want := range map[string]int{"?target=nosuch": 404, "?target=vllm-p1&instances=0": 400} {
		if code, body := fetch(t, srv.URL+"/api/v1/stream"+q, false); code != want {
			t.Errorf("stream%s: %d %s, want %d", q, code, body, want)
		}
	}
}

// TestSeriesOfOneTarget: ?target=NAME keeps the stage-level points whole
// and that instance only, in both encodings.
func TestSeriesOfOneTarget(t *testing.T) {
	l, _ := cluster16(t, 30)
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()
	var all, one Series
	get(t, srv.URL+"/api/v1/series?last=20", &all)
	get(t, srv.URL+"/api/v1/series?last=20&target=sglang-d3", &one)
	if len(one.Points) != len(all.Points) || len(all.Points) < 19 {
		t.Fatalf("%d points, want %d", len(one.Points), len(all.Points))
	}
	for i := range all.Points {
		a, o := all.Points[i], one.Points[i]
		var want []ledger.InstancePoint
		for _, in := range a.Instances {
			if in.Target == "sglang-d3" {
				want = append(want, in)
			}
		}
		if len(want) != 1 || !reflect.DeepEqual(o.Instances, want) {
			t.Fatalf("point %d: instances %+v, want %+v", i, o.Instances, want)
		}
		a.Instances, o.Instances = nil, nil
		if !reflect.DeepEqual(a, o) {
			t.Fatalf("point %d: stage-level values differ", i)
		}
	}
	_, cAll := fetch(t, srv.URL+"/api/v1/series?last=20&format=compact", false)
	_, cOne := fetch(t, srv.URL+"/api/v1/series?last=20&format=compact&target=sglang-d3", true)
	var cs CompactSeries
	if err := json.Unmarshal(cOne, &cs); err != nil {
		t.Fatal(err)
	}
	for i, raw := range cs.Points {
		var pt struct {
			NM [][3]string  `json:"nm"`
			I  [][]*float64 `json:"i"`
		}
		json.Unmarshal(raw, &pt)
		if len(pt.I) != 1 || (i == 0) != (len(pt.NM) == 1) || (i == 0 && pt.NM[0][0] != "sglang-d3") {
			t.Fatalf("compact point %d: %s", i, raw)
		}
	}
	if len(cOne) >= len(cAll)/2 {
		t.Errorf("one target's compact series is %d B of the whole %d B", len(cOne), len(cAll))
	}
	for q, want := range map[string]int{"target=nosuch": 404, "target=vllm-p0&instances=0": 400} {
		if code, _ := fetch(t, srv.URL+"/api/v1/series?"+q, false); code != want {
			t.Errorf("series?%s: %d, want %d", q, code, want)
		}
	}
}

// BenchmarkInstancesHandler5000 is one /api/v1/instances request (limit
// 50, gzip) over a ledger of 5,000 targets: what each polling client costs
// the server per second.
func BenchmarkInstancesHandler5000(b *testing.B) {
	const n = 5000
	l := ledger.New(ledger.Config{Window: 5 * time.Second})
	infos := make([]engine.Target, n)
	for i := range infos {
		role := []engine.Role{engine.Prefill, engine.Decode}[i%2]
		infos[i] = engine.Target{Name: fmt.Sprintf("t%04d", i), URL: "http://127.0.0.1:1/metrics", Role: role, Engine: engine.VLLM}
	}
	l.SetTargets(infos)
	start := time.Now().Add(-10 * time.Second).Truncate(time.Second)
	for k := 0; k < 8; k++ {
		now := start.Add(time.Duration(k) * time.Second)
		for j, in := range infos {
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Obs: observe(in, j, float64(k))})
		}
		l.Tick(now.Add(500 * time.Millisecond))
	}
	h := (&Server{Ledger: l}).Handler()
	req := httptest.NewRequest("GET", "/api/v1/instances", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	b.ReportAllocs()
	b.ResetTimer()
	var size int
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
		size = w.Body.Len()
	}
	b.SetBytes(int64(size))
}
