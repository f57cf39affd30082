package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/report"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

func runRep(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = runReport(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestReportUsage(t *testing.T) {
	dir := t.TempDir()
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := runRep(args...)
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("report %v: exit %d, stderr %q; want 2 and %q", args, code, errs, want)
		}
	}
	f("not a recording", dir)
	f("no such file", filepath.Join(dir, "missing"))
	f("-format", "-format", "pdf", dir)
	f("-source needs -from and -to", "-source", "prometheus=http://127.0.0.1:1")
	f("-from", "-source", "prometheus=http://127.0.0.1:1", "-from", "yesterday", "-to", "1")
	f("give a recording DIR", "-from", "1")
	f("-headroom \"1.5\": want 0 ≤ headroom < 1", "-headroom", "1.5", dir)
	f("-headroom \"-0.1\"", "-headroom", "-0.1", dir)
	// -h names each default once.
	if code, out, errs := runRep("-h"); code != 0 || !strings.Contains(out+errs, "(default 0.2)") || strings.Contains(out+errs, "(default -1)") {
		t.Errorf("report -h: exit %d, the headroom's default not once as 0.2:\n%s", code, out+errs)
	}
	// Decades at 1 ns: refused before any point is allocated.
	f("more than the 100000 a report reads", "-source", "prometheus=http://127.0.0.1:1", "-from", "1", "-to", "2000000000", "-interval", "1ns")
	f("more than the 100000 a report reads", "-source", "prometheus=http://127.0.0.1:1", "-from", "1", "-to", "100002")
}

// TestReportRecordingsAndCompare reads two runs through the recording seam
// (the simulator before and after the advice: one more prefill instance
// per group), writes their JSON reports, and compares the two files: the
// bottleneck moves off prefill and prefill's rise is beyond the noise.
func TestReportRecordingsAndCompare(t *testing.T) {
	saved := loadRecording
	t.Cleanup(func() { loadRecording = saved })
	loadRecording = func(dir string) (report.Input, error) {
		sc, err := sim.LoadScenario("prefill-bound")
		if err != nil {
			return report.Input{}, err
		}
		seed := int64(1)
		if filepath.Base(dir) == "after" {
			seed = 2
			for i := range sc.Groups {
				sc.Groups[i].Prefill.Instances++
			}
		}
		_, pts, _, err := simtest.Run(sc, seed, 240*time.Second)
		if err != nil {
			return report.Input{}, err
		}
		return report.Input{Points: pts, Meta: report.Meta{Interval: time.Second, Window: 5 * time.Second,
			BRequest: kvsize.Request{Bytes: sc.KVBytesPerRequest, Basis: kvsize.BasisSimulator}}}, nil
	}
	tmp := t.TempDir()
	for _, name := range []string{"before", "after"} {
		if err := os.Mkdir(filepath.Join(tmp, name), 0o755); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runRep(filepath.Join(tmp, name), "-format", "json", "-o", filepath.Join(tmp, name+".json"))
		if code != 0 {
			t.Fatalf("report %s: exit %d: %s", name, code, errs)
		}
	}
	var before struct {
		Steady struct{ From, To time.Time }
		Stages map[string]struct {
			RequestsPerSecond *float64    `json:"requests_per_second"`
			CI95              *[2]float64 `json:"ci95"`
		}
		Verdict struct{ Stage string }
	}
	b, err := os.ReadFile(filepath.Join(tmp, "before.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &before); err != nil {
		t.Fatal(err)
	}
	if before.Verdict.Stage != "prefill" || !before.Steady.To.After(before.Steady.From) {
		t.Errorf("before: verdict %q, steady %v to %v", before.Verdict.Stage, before.Steady.From, before.Steady.To)
	}
	for _, s := range []string{"prefill", "kv", "decode"} {
		if st := before.Stages[s]; st.RequestsPerSecond == nil || st.CI95 == nil {
			t.Errorf("before: stages.%s lacks requests_per_second or ci95: %s", s, b)
		}
	}
	code, out, errs := runRep(filepath.Join(tmp, "before.json"), filepath.Join(tmp, "after.json"), "-format", "json")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errs)
	}
	var c report.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if c.Verdict.A != "prefill" || !c.Verdict.Moved {
		t.Errorf("verdict %s → %s, want prefill → elsewhere", c.Verdict.A, c.Verdict.B)
	}
	if p := c.Stages.Prefill; !p.Significant || p.Diff == nil || *p.Diff <= 0 {
		t.Errorf("prefill difference %+v: want a significant rise", p)
	}
	// The two recordings compared directly say the same.
	code, html, errs := runRep(filepath.Join(tmp, "before"), filepath.Join(tmp, "after"))
	if code != 0 || !strings.Contains(html, "The bottleneck moved") {
		t.Errorf("compare recordings: exit %d, %s", code, errs)
	}
}
