package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

var updateAPI = flag.Bool("update-api", false, "rewrite testdata/*.golden.json from the API")

// goldenLedger is four instances over eight ticks, one of them going down,
// so the points hold values, absences with reasons and a partial stage.
func goldenLedger(t *testing.T) (*ledger.Ledger, time.Time) {
	t.Helper()
	l := ledger.New(ledger.Config{KVRequest: kvsize.Request{Bytes: bReq, Basis: "flag"}, Window: 5 * time.Second})
	infos := []engine.Target{
		{Name: "vllm-p0", URL: "http://10.0.0.1:8000/metrics", Role: engine.Prefill, Engine: engine.VLLM},
		{Name: "sglang-p0", URL: "http://10.0.0.2:30000/metrics", Role: engine.Prefill, Engine: engine.SGLang},
		{Name: "vllm-d0", URL: "http://10.0.0.3:8000/metrics", Role: engine.Decode, Engine: engine.VLLM},
		{Name: "sglang-d0", URL: "http://10.0.0.4:30000/metrics", Role: engine.Decode, Engine: engine.SGLang},
	}
	l.SetTargets(infos)
	const n = 8
	start := time.Now().Add(-n * time.Second).Truncate(time.Second)
	for k := 0; k < n; k++ {
		now := start.Add(time.Duration(k) * time.Second)
		for j, in := range infos {
			if in.Name == "sglang-d0" && k >= n-2 {
				l.Record(ledger.Scrape{Target: in.Name, Time: now, Err: fmt.Errorf("dial tcp 10.0.0.4:30000: connect: connection refused"), Reason: scrape.ReasonRefused})
				continue
			}
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Duration: 3 * time.Millisecond, Bytes: 9000, Obs: observe(in, j, float64(k))})
		}
		l.Tick(now.Add(500 * time.Millisecond))
	}
	return l, start
}

var (
	jsonTime    = regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)"`)
	compactTime = regexp.MustCompile(`"t":\d+`) // the compact encoding's Unix milliseconds
)

// relativeTimes writes every timestamp as its offset from start, and the
// snapshot's own "time" (the clock at the request) as "now", so the golden
// files do not depend on when the test runs.
func relativeTimes(t *testing.T, b []byte, start time.Time) []byte {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	if _, ok := top["time"]; ok {
		top["time"] = json.RawMessage(`"now"`)
		b, _ = json.Marshal(top)
	}
	b = jsonTime.ReplaceAllFunc(b, func(m []byte) []byte {
		ts, err := time.Parse(time.RFC3339Nano, string(m[1:len(m)-1]))
		if err != nil {
			t.Fatalf("time %s: %v", m, err)
		}
		return []byte(fmt.Sprintf(`"start%+.3fs"`, ts.Sub(start).Seconds()))
	})
	b = compactTime.ReplaceAllFunc(b, func(m []byte) []byte {
		var ms int64
		fmt.Sscanf(string(m), `"t":%d`, &ms)
		return []byte(fmt.Sprintf(`"t":"start%+.3fs"`, time.UnixMilli(ms).Sub(start).Seconds()))
	})
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
}

// TestAPIGolden pins the JSON the web page and other clients read: a change
// of a key, a unit or an absence shows here as a diff.
func TestAPIGolden(t *testing.T) {
	l, start := goldenLedger(t)
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()
	f := func(name, path string) {
		t.Run(name, func(t *testing.T) {
			resp, err := srv.Client().Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
			}
			got := relativeTimes(t, body, start)
			file := filepath.Join("testdata", name+".golden.json")
			if *updateAPI {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test ./internal/api -run TestAPIGolden -update-api writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("GET %s differs from %s (rerun with -update-api if the change is meant):\n%s", path, file, got)
			}
		})
	}
	f("snapshot", "/api/v1/snapshot")
	f("series", "/api/v1/series")
	f("series-compact", "/api/v1/series?format=compact")
}
