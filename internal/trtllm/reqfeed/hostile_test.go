package reqfeed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/journey"
)

// A bad answer is an error of that poll and files nothing.
func TestPollHostile(t *testing.T) {
	f := func(name string, h http.HandlerFunc, wantErr string) {
		t.Helper()
		srv := httptest.NewServer(h)
		defer srv.Close()
		l := journey.NewBook(0)
		p := &Poller{URL: srv.URL + "/perf_metrics", Client: srv.Client(), Book: l}
		err := p.Poll(context.Background())
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want %q", name, err, wantErr)
		}
		if n := len(l.Records()); n != 0 {
			t.Errorf("%s: %d records filed", name, n)
		}
		if st := p.Stats(); st.Errors != 1 {
			t.Errorf("%s: %d errors counted, want 1", name, st.Errors)
		}
	}
	body := func(code int, b string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/perf_metrics" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(code)
			w.Write([]byte(b))
		}
	}
	f("removed endpoint", body(404, "not found"), "404")
	f("garbage", body(200, "\x00\xff{{"), "parse")
	f("iteration stats", body(200, `[{"iter":1,"numActiveRequests":3}]`), "not a TensorRT-LLM perf-metrics record")
	f("bad id", body(200, `[{"ctx_server":"a:1","disagg_server_arrival_time":1,"disagg_request_id":1.5}]`), "parse")
	f("too large", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("["))
		chunk := []byte(strings.Repeat(" ", 1<<20))
		for range MaxBodyBytes>>20 + 1 {
			w.Write(chunk)
		}
	}, "larger than")
	// Records whose every time is unknown cannot be placed without a probe.
	f("no times", body(200, `[{"ctx_server":"a:1","gen_server":"b:2","disagg_request_id":7}]`), "wall clock")
}
