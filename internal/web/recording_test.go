package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// A recorded run replayed (ptdmon replay) in Chromium: the page shows the
// whole run, says it is a recording, and its time-range control narrows the
// charts to a part of the run and back.
func TestRecordedRunInChromium(t *testing.T) {
	t.Parallel() // a demo process of its own, waited on (demoTests)
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	bin := buildPtdmon(t, ctx)
	dir := filepath.Join(t.TempDir(), "run")
	rec := exec.CommandContext(ctx, bin, "demo", "-scenario", "kv-bound", "-seed", "1", "-listen", "127.0.0.1:0", "-record", dir, "-duration", "15s")
	rec.Stderr = &logWriter{t: t, prefix: "demo: "}
	must(t, rec.Run())
	base := run(t, ctx, "on ", bin, "replay", dir, "-listen", "127.0.0.1:0")

	var series struct {
		Points []struct {
			Time time.Time `json:"time"`
		} `json:"points"`
	}
	getJSON(t, base+"/api/v1/series?since=0&instances=0", &series)
	total := len(series.Points)
	if total < 10 {
		t.Fatalf("the replay serves %d points", total)
	}
	want := targetNames(t, base)

	b := startBrowser(t, ctx)
	must(t, chromedp.Do(b.ctx, chromedp.Navigate(base+"/")))
	b.waitReady(t, len(want), func(pageState) bool { return true })
	shown := func() int {
		n, _ := strconv.Atoi(b.eval(t, `document.documentElement.dataset.points || ""`))
		return n
	}
	if r := b.eval(t, `document.documentElement.dataset.recording || ""`); r != "1" {
		t.Fatal("the page does not say it shows a recording")
	}
	if b.eval(t, `String(document.getElementById("recording").hidden)`) != "false" {
		t.Error("the time-range control is hidden")
	}
	if n := shown(); n != total {
		t.Errorf("the charts show %d points of the %d recorded", n, total)
	}
	// The header's badge says replay, not live.
	testutil.Eventually(t, 5*time.Second, 100*time.Millisecond, func() (bool, string) {
		s := b.eval(t, `document.getElementById("conn").textContent`)
		return s == "replay", fmt.Sprintf("the connection badge says %q", s)
	})
	// Where TTFT goes is drawn on the recording's clock: its times lie in
	// the run, which ended before the page was opened.
	first, last := series.Points[0].Time, series.Points[total-1].Time
	testutil.Eventually(t, 10*time.Second, 200*time.Millisecond, func() (bool, string) {
		js := b.eval(t, `(() => { const el = document.querySelector("[data-phases-pool]"); return el ? JSON.stringify(el._u.data[0]) : ""; })()`)
		var ts []float64
		if js == "" || json.Unmarshal([]byte(js), &ts) != nil || len(ts) == 0 {
			return false, "no TTFT phases chart: " + js
		}
		for _, x := range ts {
			at := time.Unix(0, int64(x*1e9))
			if at.Before(first.Add(-time.Second)) || at.After(last.Add(time.Second)) {
				return false, fmt.Sprintf("the TTFT phases chart has a point at %v, outside the run's %v – %v", at, first, last)
			}
		}
		return true, ""
	})
	// The second half of the run.
	b.eval(t, `(() => { const s = document.getElementById("rec-from"); s.value = 500; s.dispatchEvent(new Event("input")); return ""; })()`)
	testutil.Eventually(t, 5*time.Second, 100*time.Millisecond, func() (bool, string) {
		n := shown()
		return n >= total*2/5 && n <= total*3/5+1, fmt.Sprintf("from the middle on, the charts show %d of %d points", n, total)
	})
	from, _ := strconv.ParseFloat(b.eval(t, `document.documentElement.dataset.viewFrom`), 64)
	to, _ := strconv.ParseFloat(b.eval(t, `document.documentElement.dataset.viewTo`), 64)
	if !(from < to) {
		t.Errorf("span %v – %v", from, to)
	}
	b.eval(t, `(() => { document.getElementById("rec-whole").click(); return ""; })()`)
	testutil.Eventually(t, 5*time.Second, 100*time.Millisecond, func() (bool, string) {
		return shown() == total, fmt.Sprintf("whole run: %d of %d points", shown(), total)
	})
	if ex := b.exceptions(); len(ex) > 0 {
		t.Errorf("exceptions: %v", ex)
	}
}
