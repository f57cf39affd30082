package web_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// postRequest sends one disaggregated request's two llm_request legs to an
// OTLP/HTTP endpoint: prefill arrives at a, queues q, prefills 0.3 s and
// ends 1 ms after its token; decode arrives 5 ms later, is scheduled after
// wait and decodes for dec.
func postRequest(t *testing.T, otlpAddr, id string, a time.Time, q, wait, dec float64) {
	t.Helper()
	td := ptrace.NewTraces()
	sec := func(s float64) time.Duration { return time.Duration(s * 1e9) }
	leg := func(service string, start time.Time, end time.Time, attrs map[string]any) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", service)
		s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName("llm_request")
		s.SetTraceID([16]byte{byte(len(id)), id[0], id[len(id)-1]})
		s.SetSpanID([8]byte{byte(len(service))})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
		attrs["gen_ai.request.id"] = id
		must(t, s.Attributes().FromRaw(attrs))
	}
	pEnd := a.Add(sec(q + 0.301))
	leg("vllm-p", a, pEnd, map[string]any{"gen_ai.request.max_tokens": 1, "gen_ai.latency.time_in_queue": q,
		"gen_ai.latency.time_to_first_token": q + 0.3, "gen_ai.latency.time_in_model_prefill": 0.3, "gen_ai.latency.time_in_model_decode": 0.0})
	da := pEnd.Add(5 * time.Millisecond)
	leg("vllm-d", da, da.Add(sec(wait+0.01+dec)), map[string]any{"gen_ai.request.max_tokens": 128, "gen_ai.latency.time_in_queue": wait,
		"gen_ai.latency.time_to_first_token": wait + 0.01, "gen_ai.latency.time_in_model_prefill": 0.01,
		"gen_ai.latency.time_in_model_decode": dec, "gen_ai.latency.e2e": wait + 0.01 + dec})
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	must(t, err)
	resp, err := http.Post("http://"+otlpAddr+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export: %s", resp.Status)
	}
}

// TestRequestsInChromium sends two requests' traces to `ptdmon demo
// -otlp.listen`, beside the simulated engines' own, and checks the page:
// the table lists the slowest first, a click draws its waterfall with each
// phase's true span (the KV transfer marked inferred), and a click on the
// stage chart lists the requests in flight then.
func TestRequestsInChromium(t *testing.T) {
	t.Parallel() // a demo process of its own, waited on (demoTests)
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	otlpAddr := ln.Addr().String()
	ln.Close()
	base := run(t, ctx, "ptdmon demo: open ", buildPtdmon(t, ctx), "demo", "-scenario", "balanced", "-seed", "1",
		"-listen", "127.0.0.1:0", "-otlp.listen", otlpAddr)
	testutil.Eventually(t, 10*time.Second, 100*time.Millisecond, func() (bool, string) {
		c, err := net.Dial("tcp", otlpAddr)
		if err == nil {
			c.Close()
		}
		return err == nil, fmt.Sprintf("OTLP port: %v", err)
	})
	now := time.Now()
	// "long" runs across the whole demo; "old" ended two hours ago.
	postRequest(t, otlpAddr, "long", now.Add(-time.Minute), 0.02, 0.08, 3600)
	postRequest(t, otlpAddr, "old", now.Add(-2*time.Hour), 0.2, 0.05, 1)

	b := startBrowser(t, ctx)
	must(t, chromedp.Do(b.ctx, chromedp.Navigate(base+"/")))
	rows := func() string {
		return b.eval(t, `[...document.querySelectorAll("#requests-table tbody tr")].map((r) => r.dataset.id).join(",")`)
	}
	// The simulated engines send their own traces too: "long" is the
	// slowest of all.
	testutil.Eventually(t, 20*time.Second, 250*time.Millisecond, func() (bool, string) {
		r := rows()
		return strings.HasPrefix(r, "long,") && strings.Contains(r, ",sim-"), fmt.Sprintf("request rows %q", r)
	})
	b.eval(t, `(() => { document.querySelector('#requests-table tr[data-id="long"]').click(); return ""; })()`)
	bars := b.eval(t, `[...document.querySelectorAll("#waterfall .wf-bar")].map((e) => [e.dataset.phase, e.dataset.start, e.dataset.end, e.dataset.inferred || ""].join(":")).join(",")`)
	want := map[string][3]string{ // start, end after arrival, inferred
		"queue":       {"0", "0.02", ""},
		"prefill":     {"0.02", "0.32", ""},
		"kv_transfer": {"0.321", "0.406", "1"}, // prefill leg's end to decode's scheduling: 0.326 + 0.08
		"decode":      {"0.406", "3600.416", ""},
	}
	got := map[string]bool{}
	for _, bar := range strings.Split(bars, ",") {
		p := strings.Split(bar, ":")
		w, ok := want[p[0]]
		if !ok || len(p) != 4 {
			t.Errorf("unexpected bar %q", bar)
			continue
		}
		got[p[0]] = true
		for i := range 2 {
			x, _ := strconv.ParseFloat(p[1+i], 64)
			y, _ := strconv.ParseFloat(w[i], 64)
			if math.Abs(x-y) > 1e-3 {
				t.Errorf("%s bar %v, want %v", p[0], p[1:3], w[:2])
			}
		}
		if p[3] != w[2] {
			t.Errorf("%s inferred %q, want %q", p[0], p[3], w[2])
		}
	}
	if len(got) != len(want) {
		t.Errorf("waterfall bars %q", bars)
	}
	if absent := b.eval(t, `[...document.querySelectorAll("#waterfall .wf-absent li")].map((e) => e.dataset.phase).join(",")`); absent != "decode_queue" {
		t.Errorf("absent phases listed %q", absent)
	}

	// A click in the middle of the stage chart lists the requests in
	// flight then: "long" and simulated ones, never "old".
	b.waitReady(t, len(targetNames(t, base)), func(pageState) bool { return true })
	x, y := b.center(t, "#charts .uplot .u-over")
	must(t, chromedp.Do(b.ctx, chromedp.MouseClickXY(x, y)))
	type row struct {
		ID           string
		Arrival, E2E float64
	}
	var picked float64
	var listed []row
	testutil.Eventually(t, 10*time.Second, 250*time.Millisecond, func() (bool, string) {
		var err error
		picked, err = strconv.ParseFloat(b.eval(t, `document.getElementById("req-at").dataset.t || "0"`), 64)
		must(t, err)
		// The rows are those of the click's moment once the table says so
		// (read first: a table of before the click may still be shown).
		shown := b.eval(t, `document.getElementById("requests-table").dataset.at || ""`)
		listed, err = chromedp.Run(b.ctx, chromedp.Evaluate[[]row](`[...document.querySelectorAll("#requests-table tbody tr")].map((r) => ({ID: r.dataset.id, Arrival: +r.dataset.arrival, E2E: r.dataset.e2e == null ? -1 : +r.dataset.e2e}))`))
		must(t, err)
		return picked > 0 && shown == strconv.FormatFloat(picked, 'f', -1, 64) && len(listed) > 0 && listed[0].ID == "long",
			fmt.Sprintf("in flight at %v (table at %q): %+v", picked, shown, listed)
	})
	for _, r := range listed {
		if r.ID == "old" || r.Arrival > picked || (r.E2E >= 0 && r.Arrival+r.E2E < picked) {
			t.Errorf("%s (arrival %v, e2e %v) listed as in flight at %v", r.ID, r.Arrival, r.E2E, picked)
		}
	}
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
}

// center returns the page coordinates of the middle of the first element
// matching sel.
func (b *browser) center(t *testing.T, sel string) (float64, float64) {
	t.Helper()
	type pt struct{ X, Y float64 }
	p, err := chromedp.Run(b.ctx, chromedp.Evaluate[pt](`(() => { const e = document.querySelector(`+strconv.Quote(sel)+`); e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`))
	must(t, err)
	return p.X, p.Y
}
