package web_test

// A fleet of a few hundred instances behind the real API, fed into the real
// ledger once a second, with one instance of each outlier kind made on
// purpose: the page in headless Chromium must show groups, those outliers
// first, filter, sort and page on the server, and fetch no instance's data
// it does not show.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
	"github.com/ptdmon/ptdmon/internal/testutil"
	"github.com/ptdmon/ptdmon/internal/web"
)

const fleetBReq = 1 << 30

// fleet is a running fleet: its URL, every instance's name, and the one
// instance of each outlier kind.
type fleet struct {
	url                         string
	names                       []string
	down, stalled, queued, slow string
	// remove takes an instance out of the ledger's targets, as a
	// configuration reload does.
	remove func(name string)
}

// fleetSizes are the instances per engine and role.
var fleetSizes = map[engine.Engine]int{engine.VLLM: 80, engine.SGLang: 70}

// startFleet serves the API and the page on 127.0.0.1 over a ledger that
// holds a minute of history and gets one scrape of every instance per
// second until the test ends. Every instance completes 5–5.45 req/s with
// 5–7 running and 0–1 waiting, except: down's scrapes fail (connection
// refused); stalled has 6 running, 3 waiting and a completion counter that
// never moves; queued has 40 waiting; slow completes 0.3 req/s while busy.
// At 5 req/s, the peers complete about 20 requests over W (5 s, 4 s between
// its first and last samples): none or one by chance is far too unlikely
// for the outlier rules to let pass (docs/web.md).
func startFleet(t *testing.T, ctx context.Context) *fleet {
	t.Helper()
	f := &fleet{down: "vllm-p042", stalled: "sglang-d007", queued: "vllm-d013", slow: "sglang-p011"}
	var infos []engine.Target
	for _, eng := range []engine.Engine{engine.VLLM, engine.SGLang} {
		for _, role := range []engine.Role{engine.Prefill, engine.Decode} {
			for i := 0; i < fleetSizes[eng]; i++ {
				name := fmt.Sprintf("%s-%s%03d", eng, role[:1], i)
				infos = append(infos, engine.Target{Name: name, URL: "http://127.0.0.1:9/metrics", Role: role, Engine: eng})
				f.names = append(f.names, name)
			}
		}
	}
	l := ledger.New(ledger.Config{KVRequest: kvsize.Request{Bytes: fleetBReq, Basis: "flag"}, Window: 5 * time.Second})
	l.SetTargets(infos)
	f.remove = func(name string) {
		l.SetTargets(slices.DeleteFunc(slices.Clone(infos), func(in engine.Target) bool { return in.Name == name }))
	}
	start := time.Now().Add(-60 * time.Second)
	feed := func(now time.Time) {
		el := now.Sub(start).Seconds()
		for j, in := range infos {
			if in.Name == f.down && el > 3 {
				l.Record(ledger.Scrape{Target: in.Name, Time: now, Reason: scrape.ReasonRefused,
					Err: fmt.Errorf(`GET http://10.0.4.2:8000/metrics: Get "http://10.0.4.2:8000/metrics": dial tcp 10.0.4.2:8000: connect: connection refused`)})
				continue
			}
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Duration: 2 * time.Millisecond, Bytes: 9000, Obs: f.observe(in, j, el)})
		}
		l.Tick(now)
	}
	for k := 0; k < 60; k++ {
		feed(start.Add(time.Duration(k) * time.Second))
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				feed(now)
			}
		}
	}()
	s := &api.Server{Ledger: l, Extra: web.Routes()}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		close(done)
		wg.Wait()
		s.CloseStreams()
		srv.Close()
	})
	f.url = srv.URL
	return f
}

// fleetModel is the model every instance of the fleet serves; on two
// engines it is two pools (docs/pools.md).
const (
	fleetModel = "meta-llama/Llama-3.1-8B-Instruct"
	poolVLLM   = fleetModel + " (vllm)"
	poolSGLang = fleetModel + " (sglang)"
)

func (f *fleet) observe(in engine.Target, j int, el float64) *engine.Observation {
	o := &engine.Observation{Engine: in.Engine, Role: in.Role, Model: fleetModel}
	rps := 5 + 0.05*float64(j%10)
	running, waiting := float64(5+j%3), float64(j%2)
	done := 1000 + rps*el
	switch in.Name {
	case f.stalled:
		done, running, waiting = 1000, 6, 3
	case f.queued:
		waiting = 40
	case f.slow:
		done = 1000 + 0.3*el
	}
	o.Counters = []engine.CounterValue{
		{Metric: engine.Completed, Series: 1, Value: done},
		{Metric: engine.PromptTokens, Series: 2, Value: 8192 * done},
		{Metric: engine.GenerationTokens, Series: 3, Value: 256 * done},
	}
	if in.Role == engine.Prefill {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.KVBytes, Series: 4, Value: fleetBReq * done})
	}
	set := func(m engine.Metric, v float64) { o.Gauges[m.GaugeIndex()], o.HasGauges[m.GaugeIndex()] = v, true }
	set(engine.Running, running)
	set(engine.Waiting, waiting)
	set(engine.KVUsage, 0.3+0.005*float64(j%100))
	return o
}

// tableJS reads the fleet table as an engineer sees it.
const tableJS = `(() => { try {
  const t = document.getElementById("instances");
  const heads = [...t.tHead.rows[0].cells].map((c) => c.textContent.replace(/ [▲▼]$/, "").replace(/ \(.*\)$/, ""));
  const col = (name) => heads.indexOf(name);
  const rows = (sel) => [...t.querySelectorAll(sel)].map((tr) => ({
    Name: tr.dataset.target, Status: tr.dataset.status || "", StatusText: tr.children[col("Status")].textContent,
    Role: tr.children[col("Role")].textContent, Engine: tr.children[col("Engine")].textContent,
    Waiting: tr.children[col("Waiting")].textContent }));
  return {
    Total: t.dataset.total || "", Matched: t.dataset.matched || "",
    Groups: [...t.querySelectorAll("tbody.groups tr.group")].map((tr) => tr.dataset.group),
    List: rows("tbody.list tr[data-target]"),
    Members: rows("tbody.groups tr[data-target]"),
    AllRows: t.querySelectorAll("tbody tr").length,
    ListHead: (t.querySelector("tbody.list tr.listhead") || {}).textContent || "",
    Counts: [...document.querySelectorAll("#fleet-counts [data-count]")].map((b) => b.textContent),
    Picked: document.documentElement.dataset.picked || "",
  };
} catch (e) { return { Error: String(e) }; } })()`

type tableRow struct{ Name, Status, StatusText, Role, Engine, Waiting string }

type tableState struct {
	Total, Matched, ListHead, Picked, Error string
	Groups, Counts                          []string
	List, Members                           []tableRow
	AllRows                                 int
}

func (s tableState) listNames() []string {
	out := make([]string, len(s.List))
	for i, r := range s.List {
		out[i] = r.Name
	}
	return out
}

// waitTable polls the table until ok holds, for up to 20 s.
func (b *browser) waitTable(t *testing.T, what string, ok func(tableState) bool) tableState {
	t.Helper()
	var st tableState
	testutil.Eventually(t, 20*time.Second, 150*time.Millisecond, func() (bool, string) {
		var err error
		st, err = runEval[tableState](b, tableJS)
		must(t, err)
		if st.Error != "" {
			t.Fatalf("table state: %s", st.Error)
		}
		return ok(st), fmt.Sprintf("%s; table %+v", what, st)
	})
	return st
}

// TestFleetTableInChromium opens the page of a 300-instance fleet in
// headless Chromium.
func TestFleetTableInChromium(t *testing.T) {
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	f := startFleet(t, ctx)
	b := startBrowser(t, ctx)
	net := b.watchNetwork()
	must(t, enableNetwork(b))
	must(t, navigate(b, f.url+"/"))
	b.waitReady(t, 25, func(pageState) bool { return true })

	// Groups, not 300 rows: one summary row per pool and role (the
	// verdict's groups: one model on two engines is two pools), worst
	// first, and one page of instances.
	// The standings judge over a window of scrapes: on a loaded machine the
	// first frames may come before they have judged every outlier, so the
	// page is read once the first rows are the outliers, and checked then.
	want := []string{f.down, f.stalled, f.queued, f.slow}
	st := b.waitTable(t, "groups and the first page, outliers judged", func(s tableState) bool {
		return s.Total == fmt.Sprint(len(f.names)) && len(s.Groups) == 4 && len(s.List) == 25 && len(s.Counts) == 4 &&
			slices.Equal(s.listNames()[:4], want)
	})
	if st.AllRows > 25+4+2 {
		t.Errorf("the table has %d rows for %d instances; want the groups and one page", st.AllRows, len(f.names))
	}
	for _, g := range st.Groups[2:] {
		if strings.HasPrefix(g, poolVLLM+"/prefill") || strings.HasPrefix(g, poolSGLang+"/decode") {
			t.Errorf("groups %q: the groups with a down or stalled instance come first", st.Groups)
		}
	}
	if !slices.Contains(st.Groups, poolVLLM+"/prefill") || !slices.Contains(st.Groups, poolSGLang+"/decode") {
		t.Errorf("groups %q, want pool/role ids", st.Groups)
	}

	// Outliers first, in the order down, stalled, queued, slow, then the
	// healthy ones by name.
	if got := st.listNames()[:4]; !slices.Equal(got, want) {
		t.Errorf("first rows %q, want the outliers %q", got, want)
	}
	for i, s := range []string{"down", "stalled", "queued", "slow"} {
		if st.List[i].Status != s {
			t.Errorf("row %s has status %q, want %q", st.List[i].Name, st.List[i].Status, s)
		}
	}
	if !strings.Contains(st.List[0].StatusText, "connection refused") {
		t.Errorf("the down row says %q; want its scrape error", st.List[0].StatusText)
	}
	if !strings.Contains(st.List[1].StatusText, "0 completions") {
		t.Errorf("the stalled row says %q; want why", st.List[1].StatusText)
	}
	healthy := slices.Clone(f.names)
	healthy = slices.DeleteFunc(healthy, func(n string) bool { return slices.Contains(want, n) })
	slices.Sort(healthy)
	if got := st.listNames()[4:]; !slices.Equal(got, healthy[:21]) {
		t.Errorf("after the outliers %q, want the rest by name %q", got, healthy[:21])
	}
	if want := []string{"1 down", "1 stalled", "1 queued", "1 slow"}; !slices.Equal(st.Counts, want) {
		t.Errorf("counts %q, want %q", st.Counts, want)
	}

	// With one group open: the screenshot of docs/web.md.
	b.eval(t, `(() => { document.querySelector('#instances tr.group[data-group="`+poolSGLang+`/decode"]').click(); return ""; })()`)
	b.waitTable(t, "expand sglang/decode", func(s tableState) bool { return len(s.Members) == 25 })
	out := artifacts(t)
	if *updateScreenshots {
		out = filepath.Join(moduleRoot(t), "docs", "screenshots")
	}
	must(t, os.WriteFile(filepath.Join(out, "fleet.png"), b.screenshotOf(t, "#fleet"), 0o644))
	b.eval(t, `(() => { document.querySelector('#instances tr.group[data-group="`+poolSGLang+`/decode"]').click(); return ""; })()`)
	b.waitTable(t, "collapse sglang/decode", func(s tableState) bool { return len(s.Members) == 0 })

	// The filter box narrows the rows to the names that contain it.
	typeInto(t, b, "fleet-q", "sglang-d00")
	var match []string
	for _, n := range f.names {
		if strings.Contains(n, "sglang-d00") {
			match = append(match, n)
		}
	}
	// The stall is judged at each refresh from the newest window; on a
	// starved machine one refresh may find the stalled instance's window
	// too short to judge (internal/diagnose/outliers.go), so the order
	// is awaited too.
	st = b.waitTable(t, "filter sglang-d00 with the stalled instance first", func(s tableState) bool {
		return s.Matched == fmt.Sprint(len(match)) && len(s.List) > 0 && s.List[0].Name == f.stalled
	})
	got := st.listNames()
	if got[0] != f.stalled || !sameSet(got, match) {
		t.Errorf("filtered rows %q, want %q with the stalled %s first", got, match, f.stalled)
	}
	typeInto(t, b, "fleet-q", "")

	// The status filter: only the down instance.
	selectOption(t, b, "fleet-status", "down")
	st = b.waitTable(t, "status down", func(s tableState) bool { return s.Matched == "1" && len(s.List) == 1 })
	if st.List[0].Name != f.down {
		t.Errorf("status=down shows %q", st.listNames())
	}
	// The counts are shortcuts to the same filter.
	b.eval(t, `(() => { document.querySelector('#fleet-counts [data-count="queued"]').click(); return ""; })()`)
	st = b.waitTable(t, "status queued", func(s tableState) bool { return s.Matched == "1" && len(s.List) == 1 && s.List[0].Name != f.down })
	if st.List[0].Name != f.queued || st.List[0].Status != "queued" {
		t.Errorf("the queued count shows %+v", st.List)
	}
	selectOption(t, b, "fleet-status", "all")
	b.waitTable(t, "status all", func(s tableState) bool { return s.Matched == fmt.Sprint(len(f.names)) })

	// Sorting by a column orders the rows by it, on the server: the most
	// waiting first (the queued instance), then the other way round.
	clickHead(t, b, "Waiting")
	st = b.waitTable(t, "sort by waiting", func(s tableState) bool {
		return strings.Contains(s.ListHead, "by Waiting descending") && len(s.List) == 25
	})
	if w := waitings(t, st); st.List[0].Name != f.queued || !slices.IsSortedFunc(w, func(a, b float64) int { return int(b - a) }) {
		t.Errorf("by waiting, descending: %q %v", st.listNames(), w)
	}
	clickHead(t, b, "Waiting")
	st = b.waitTable(t, "sort by waiting ascending", func(s tableState) bool {
		return strings.Contains(s.ListHead, "by Waiting ascending") && len(s.List) == 25
	})
	if w := waitings(t, st); !slices.IsSorted(w) || w[len(w)-1] > 1 {
		t.Errorf("by waiting, ascending: %v", w)
	}
	clickHead(t, b, "Instance")
	st = b.waitTable(t, "sort by name", func(s tableState) bool {
		return strings.Contains(s.ListHead, "by Instance ascending") && len(s.List) == 25
	})
	sorted := slices.Sorted(slices.Values(f.names))
	if got := st.listNames(); !slices.Equal(got, sorted[:25]) {
		t.Errorf("by name: %q, want %q", got, sorted[:25])
	}
	clickHead(t, b, "Status")
	b.waitTable(t, "outliers first again", func(s tableState) bool { return len(s.List) > 0 && s.List[0].Name == f.down })

	// A group expands into its own instances, one page at a time.
	b.eval(t, `(() => { document.querySelector('#instances tr.group[data-group="`+poolSGLang+`/prefill"]').click(); return ""; })()`)
	// Its outlier comes first once the standings have judged it: a
	// loaded machine may show the group before its first judgement.
	st = b.waitTable(t, "expand sglang/prefill, its outlier first", func(s tableState) bool {
		return len(s.Members) == 25 && s.Members[0].Name == f.slow
	})
	for _, r := range st.Members {
		if r.Role != "prefill" || r.Engine != "sglang" {
			t.Errorf("member %+v of sglang/prefill", r)
		}
	}
	if st.Members[0].Name != f.slow {
		t.Errorf("the group's first member is %q, want its outlier %q", st.Members[0].Name, f.slow)
	}
	b.eval(t, `(() => { [...document.querySelectorAll("#instances tbody.groups tr.pager button")].find((x) => x.textContent.startsWith("next")).click(); return ""; })()`)
	b.waitTable(t, "second page of the group", func(s tableState) bool { return len(s.Members) == 25 && s.Members[0].Name != f.slow })
	if n := fleetSizes[engine.SGLang]; !strings.Contains(b.eval(t, `document.querySelector("#instances tbody.groups tr.pager").textContent`), fmt.Sprintf("26–50 of %d", n)) {
		t.Errorf("pager of the group: %q", b.eval(t, `document.querySelector("#instances tbody.groups tr.pager").textContent`))
	}
	b.eval(t, `(() => { document.querySelector('#instances tr.group[data-group="`+poolSGLang+`/prefill"]').click(); return ""; })()`)
	b.waitTable(t, "collapse", func(s tableState) bool { return len(s.Members) == 0 })

	// Picking an instance loads its history and streams it alone; the
	// charts show its prefill and KV curves and no decode.
	pick := "vllm-p001"
	typeInto(t, b, "fleet-q", pick)
	b.waitTable(t, "filter "+pick, func(s tableState) bool { return len(s.List) == 1 && s.List[0].Name == pick })
	b.eval(t, fmt.Sprintf(`(() => { document.querySelector('#instances tbody.list tr[data-target=%q]').click(); return ""; })()`, pick))
	b.waitTable(t, "pick", func(s tableState) bool { return s.Picked == pick })
	one := b.waitReady(t, 1, func(s pageState) bool { c := s.counts(); return c[0] >= 5 && c[1] >= 5 })
	if c := one.counts(); c[2] != 0 {
		t.Errorf("picked %s: points per curve %v, want no decode", pick, c)
	}
	time.Sleep(1500 * time.Millisecond)

	// Paused, the table asks for nothing; resumed, it polls again.
	polls := func() int {
		n := 0
		for _, u := range net.requests() {
			if strings.HasPrefix(u, "/api/v1/instances?") {
				n++
			}
		}
		return n
	}
	b.eval(t, `(() => { document.getElementById("pause").click(); return ""; })()`)
	time.Sleep(1200 * time.Millisecond) // a poll in flight finishes
	before := polls()
	time.Sleep(2500 * time.Millisecond)
	if n := polls(); n != before {
		t.Errorf("paused, the table polled %d times in 2.5 s", n-before)
	}
	// An instance that leaves between the table's poll and the click: the
	// charts go back to the whole deployment and say why.
	typeInto(t, b, "fleet-q", "vllm-p002")
	b.eval(t, `(() => { document.getElementById("pause").click(); return ""; })()`)
	b.waitTable(t, "filter vllm-p002", func(s tableState) bool { return len(s.List) == 1 && s.List[0].Name == "vllm-p002" })
	if polls() == before {
		t.Error("resumed, the table did not poll")
	}
	b.eval(t, `(() => { document.getElementById("pause").click(); return ""; })()`)
	f.remove("vllm-p002")
	b.eval(t, `(() => { document.querySelector('#instances tbody.list tr[data-target="vllm-p002"]').click(); return ""; })()`)
	var filterText string
	testutil.Eventually(t, 10*time.Second, 200*time.Millisecond, func() (bool, string) {
		filterText = b.eval(t, `document.getElementById("filter").textContent`)
		return strings.Contains(filterText, "no longer known"), fmt.Sprintf("after picking a removed instance the charts say %q", filterText)
	})
	if !strings.Contains(filterText, "vllm-p002 is no longer known") || b.eval(t, `document.documentElement.dataset.filter`) != "" {
		t.Errorf("after picking a removed instance the charts say %q (filter %q)", filterText, b.eval(t, `document.documentElement.dataset.filter`))
	}
	b.eval(t, `(() => { document.getElementById("pause").click(); return ""; })()`)

	// What the browser asked for.
	urls := net.requests()
	var seriesPicked, streamPicked bool
	for _, u := range urls {
		path, query, _ := strings.Cut(u, "?")
		switch path {
		case "/api/v1/series", "/api/v1/stream":
			scoped := strings.Contains(query, "instances=0") || strings.Contains(query, "target=")
			if !scoped {
				t.Errorf("%s fetches every instance", u)
			}
			if strings.Contains(query, "target="+pick) {
				seriesPicked = seriesPicked || path == "/api/v1/series"
				streamPicked = streamPicked || path == "/api/v1/stream"
			}
		case "/api/v1/snapshot":
			if !strings.Contains(query, "instances=0") {
				t.Errorf("%s fetches every instance", u)
			}
		case "/api/v1/instances":
			if !strings.Contains(query, "limit=25") {
				t.Errorf("%s: want limit=25, the rows on screen", u)
			}
		case "/api/v1/targets":
			t.Errorf("%s lists every target", u)
		}
	}
	if !seriesPicked || !streamPicked {
		t.Errorf("after picking %s: series with its target %v, stream %v; requests %q", pick, seriesPicked, streamPicked, urls)
	}
	events, maxEvent := net.stream()
	if maxEvent >= 4096 {
		t.Errorf("a stream event is %d bytes for %d instances; the stage-level stream should be far below 4 KiB", maxEvent, len(f.names))
	}
	load := net.loaded()
	t.Logf("%d requests, %.0f bytes (stream excluded), %d stream events, largest %d bytes", len(urls), load.total, events, maxEvent)
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
}

func waitings(t *testing.T, st tableState) []float64 {
	t.Helper()
	out := make([]float64, len(st.List))
	for i, r := range st.List {
		if _, err := fmt.Sscan(r.Waiting, &out[i]); err != nil {
			t.Fatalf("waiting of %s is %q", r.Name, r.Waiting)
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	x, y := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(x, y)
}

// typeInto sets an input's value and fires its input event, as typing does.
func typeInto(t *testing.T, b *browser, id, text string) {
	t.Helper()
	b.eval(t, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("input")); return ""; })()`, id, text))
}

func selectOption(t *testing.T, b *browser, id, value string) {
	t.Helper()
	b.eval(t, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("change")); return ""; })()`, id, value))
}

func clickHead(t *testing.T, b *browser, name string) {
	t.Helper()
	b.eval(t, fmt.Sprintf(`(() => { [...document.querySelectorAll("#instances thead th")].find((th) => th.textContent.startsWith(%q)).click(); return ""; })()`, name))
}
