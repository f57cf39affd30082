package reqfeed

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

// The JSONL files of current servers: lines there before the first poll
// are not read, appended lines are, each once and only when complete; a
// file that appears later is read from its start.
func TestPollFiles(t *testing.T) {
	dir := t.TempDir()
	now := float64(time.Now().UnixNano()) / 1e9
	const k = 1.1e9
	ts := reqtracetest.Timelines(30, 9, now-k-20)
	lines := func(ts []reqtracetest.Timeline) string {
		var b strings.Builder
		for _, tl := range ts {
			b.WriteString(tl.DisaggC(reqtracetest.Offsets{}, true) + "\n")
		}
		return b.String()
	}
	a := filepath.Join(dir, "perf_metrics-disagg-h-1-20261201T120000Z.jsonl")
	appendTo := func(name, s string) {
		f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(a, lines(ts[:5])) // before serve started: not read
	l := journey.NewBook(0)
	p := &Poller{Files: filepath.Join(dir, "perf_metrics-disagg-*.jsonl"), Pool: "trt", Book: l}
	poll := func() {
		t.Helper()
		if err := p.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	poll()
	torn := ts[14].DisaggC(reqtracetest.Offsets{}, true)
	appendTo(a, lines(ts[5:14])+"not json\n"+torn[:40])
	poll()
	appendTo(a, torn[40:]+"\n")
	poll()
	appendTo(filepath.Join(dir, "perf_metrics-disagg-h-2-20261201T130000Z.jsonl"), lines(ts[15:]))
	poll()
	poll()

	got := map[string]journey.Record{}
	for _, r := range l.Records() {
		if _, dup := got[r.ID]; dup {
			t.Errorf("request %s filed twice", r.ID)
		}
		got[r.ID] = r
	}
	if len(got) != len(ts)-5 {
		t.Errorf("%d requests, want %d", len(got), len(ts)-5)
	}
	if st := p.Stats(); st.Skipped != 1 {
		t.Errorf("skipped %d lines, want the 1 malformed", st.Skipped)
	}
	for i, tl := range ts {
		r, ok := got[strconv.FormatUint(tl.ID, 10)]
		if i < 5 {
			if ok {
				t.Errorf("request %d, written before the first poll, was read", tl.ID)
			}
			continue
		}
		if !ok {
			t.Errorf("request %d missing", tl.ID)
			continue
		}
		w := tl.Want()
		if v, ok := r.Phase(journey.PhaseKVTransfer); !ok || !near(v, w.KV, 1e-6) {
			t.Errorf("%d kv_transfer %v (%v), want %v", tl.ID, v, ok, w.KV)
		}
		if v, ok := r.Phase(journey.PhaseDecode); !ok || !near(v, w.Decode, 1e-6) {
			t.Errorf("%d decode %v (%v), want %v", tl.ID, v, ok, w.Decode)
		}
		if arr := seconds(r.Arrival); arr < tl.DisaggArrival+k-1e-6 {
			t.Errorf("%d arrival %.6f before the true %.6f", tl.ID, arr, tl.DisaggArrival+k)
		}
	}
}
