package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

var updateRequests = flag.Bool("update-requests-testdata", false, "rewrite testdata/requests from the generator")

const tdDir = "testdata/requests"

// The fixture: 12 requests on one true clock, written as generation A, B
// and C disagg records (one C without KV timestamps), in shuffled order,
// with a torn line in the middle. The gen worker's clock is 30 s behind the
// disagg server's, the ctx worker's 1.25 s ahead.
var (
	tdOffsets   = reqtracetest.Offsets{Ctx: 1.25, Gen: -30}
	tdTimelines = reqtracetest.Timelines(12, 42, 73510)
)

const tornLine = `{"ctx_server":"10.0.1.21:8001","gen_server":"10.0.2.31:8002","disagg_server_arri`

func tdGen(i int) string { return [...]string{"A", "B", "C"}[i%3] }

func tdFiles() map[string][]byte {
	var lines []string
	for i, t := range tdTimelines {
		switch tdGen(i) {
		case "A":
			lines = append(lines, t.DisaggA(tdOffsets))
		case "B":
			lines = append(lines, t.DisaggB(tdOffsets))
		default:
			lines = append(lines, t.DisaggC(tdOffsets, i != 5))
		}
	}
	rng := rand.New(rand.NewPCG(42, 42))
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	lines = append(lines[:6], append([]string{tornLine}, lines[6:]...)...) // line 7
	probes := reqtracetest.ClockSyncJSON(
		reqtracetest.ProbeSpec{Server: reqtracetest.GenServer, Originate: 73400, Out: 0.004, Proc: 0.2, Back: 0.0001, Offset: tdOffsets.Gen},
		reqtracetest.ProbeSpec{Server: reqtracetest.GenServer, Originate: 73401, Out: 0.0002, Proc: 0.2, Back: 0.0002, Offset: tdOffsets.Gen, AsHeader: true},
		reqtracetest.ProbeSpec{Server: reqtracetest.GenServer, Originate: 73402, Out: 0.0001, Proc: 0.2, Back: 0.009, Offset: tdOffsets.Gen},
		reqtracetest.ProbeSpec{Server: reqtracetest.CtxServer, Originate: 73403, Out: 0.0003, Proc: 0.2, Back: 0.0003, Offset: tdOffsets.Ctx},
	)
	return map[string][]byte{
		"disagg.jsonl":    []byte(strings.Join(lines, "\n") + "\n"),
		"clock-sync.json": append(probes, '\n'),
		"usage.json":      append(reqtracetest.UsageJSON(tdTimelines), '\n'),
		"not-jsonl.txt":   []byte("# HELP trtllm_request_success_total Count of successful requests.\n# TYPE trtllm_request_success_total counter\ntrtllm_request_success_total 12\n"),
	}
}

// The files in testdata are the generator's output, byte for byte, so the
// expected values below (computed from the timelines) apply to them.
func TestRequestsTestdataMatchesGenerator(t *testing.T) {
	for name, want := range tdFiles() {
		path := filepath.Join(tdDir, name)
		if *updateRequests {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update-requests-testdata)", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s differs from the generator (run with -update-requests-testdata)", path)
		}
	}
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = dispatch(append([]string{"requests"}, args...), &o, &e)
	return code, o.String(), e.String()
}

func td(name string) string { return filepath.Join(tdDir, name) }

var negativeNumber = regexp.MustCompile(`(^|[\s(])-\d`)

func TestRequestsUnalignedText(t *testing.T) {
	code, out, errOut := run(t, td("disagg.jsonl"), "-usage", td("usage.json"))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "e2e and decode are missing for 12 requests timed on different clocks: -clock-sync FILE aligns them") {
		t.Errorf("no hint at -clock-sync:\n%s", errOut)
	}
	if !strings.Contains(errOut, "disagg.jsonl:7: ") {
		t.Fatalf("torn line not reported with file:line:\n%s", errOut)
	}
	for _, want := range []string{
		"12 requests", "1 skipped", "formats: disagg/A 4, disagg/B 4, disagg/C 4",
		"causal chain broken across clocks in 12 requests",
		"negative: gen.last_token_time before disagg_server_arrival_time",
		"no gen.kv_cache_transfer_start (generation B drops it)",
		"none: no request has a trusted e2e",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// e2e and decode: 0 counted, 12 missing.
	if !regexp.MustCompile(`(?m)^\s*e2e\s+0\s+12\s+-`).MatchString(out) || !regexp.MustCompile(`(?m)^\s*decode\s+0\s+12\s+-`).MatchString(out) {
		t.Errorf("e2e/decode rows not all missing:\n%s", out)
	}
	if m := negativeNumber.FindString(out); m != "" {
		t.Errorf("negative number %q in output:\n%s", m, out)
	}
}

func TestRequestsAlignedJSON(t *testing.T) {
	// Flags after the files work too.
	code, out, errOut := run(t, td("disagg.jsonl"), "-clock-sync", td("clock-sync.json"), "-usage", td("usage.json"), "-json", "-top", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if strings.Contains(errOut, "-clock-sync FILE aligns") {
		t.Errorf("hint at -clock-sync although it was given:\n%s", errOut)
	}
	var rep struct {
		Skipped []struct {
			File string
			Line int
		} `json:"skipped_lines"`
		Clocks []struct {
			Server      string
			Offset      float64 `json:"offset_seconds"`
			Uncertainty float64 `json:"uncertainty_seconds"`
		} `json:"clock_sync"`
		Requests []struct {
			ID      string             `json:"id"`
			Spans   map[string]float64 `json:"spans_seconds"`
			Missing map[string]string  `json:"missing"`
		} `json:"requests"`
		Slowest []struct {
			ID string `json:"id"`
		} `json:"slowest"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Line != 7 {
		t.Fatalf("skipped %+v", rep.Skipped)
	}
	for _, c := range rep.Clocks {
		want := map[string]float64{reqtracetest.GenServer: tdOffsets.Gen, reqtracetest.CtxServer: tdOffsets.Ctx}[c.Server]
		if math.Abs(c.Offset-want) > c.Uncertainty+1e-9 || c.Uncertainty > 0.0003 {
			t.Errorf("clock %+v does not cover true offset %v with the least-delay probe", c, want)
		}
	}
	truth := map[string]reqtracetest.Want{}
	gens := map[string]string{}
	for i, tl := range tdTimelines {
		id := strconv.FormatUint(tl.ID, 10)
		truth[id], gens[id] = tl.Want(), tdGen(i)
	}
	if len(rep.Requests) != 12 {
		t.Fatalf("%d requests", len(rep.Requests))
	}
	for _, q := range rep.Requests {
		w, ok := truth[q.ID]
		if !ok {
			t.Fatalf("unknown id %q (64-bit id not exact?)", q.ID)
		}
		want := map[string]float64{"queue": w.Queue, "prefill": w.Prefill, "ttft": w.TTFT, "decode": w.Decode, "e2e": w.E2E, "tpot": w.TPOT, "kv_transfer": w.KV}
		if gens[q.ID] == "B" || q.ID == strconv.FormatUint(tdTimelines[5].ID, 10) {
			delete(want, "kv_transfer")
			if q.Missing["kv_transfer"] == "" {
				t.Errorf("%s: kv_transfer not missing", q.ID)
			}
		}
		for span, v := range want {
			got, ok := q.Spans[span]
			if !ok || math.Abs(got-v) > 1e-6 {
				t.Errorf("%s %s = %v (present %v, missing %q), want %v", q.ID, span, got, ok, q.Missing[span], v)
			}
		}
	}
	if len(rep.Slowest) != 3 {
		t.Fatalf("slowest %+v", rep.Slowest)
	}
	found := false
	for _, q := range rep.Requests {
		found = found || q.ID == "9007199254740993"
	}
	if !found {
		t.Fatal("id 9007199254740993 not preserved exactly")
	}
}

func TestRequestsHTML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errOut := run(t, "-clock-sync", td("clock-sync.json"), "-html", out, td("disagg.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	if !strings.Contains(h, "<svg") || strings.Contains(h, "<script") || strings.Contains(h, "src=") || strings.Contains(h, "href=") {
		t.Fatalf("HTML not a self-contained report with an SVG")
	}
	if !strings.Contains(h, "9007199254740993") && !strings.Contains(h, strconv.FormatUint(tdTimelines[1].ID, 10)) {
		t.Fatalf("no request ids in the HTML")
	}
}

func TestRequestsExitCodes(t *testing.T) {
	dir := t.TempDir()
	badClock := filepath.Join(dir, "clock.json")
	if err := os.WriteFile(badClock, []byte(`{"probes":[{"server":"x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no files", nil, 2, "missing argument FILE.jsonl..."},
		{"bad flag", []string{"-nope", td("disagg.jsonl")}, 2, "flag provided but not defined"},
		{"help", []string{"-h"}, 0, ""},
		{"not JSONL", []string{td("disagg.jsonl"), td("not-jsonl.txt")}, 2, "not-jsonl.txt: no perf-metrics record in 3 lines"},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, 2, "nope.jsonl"},
		{"bad clock-sync", []string{"-clock-sync", badClock, td("disagg.jsonl")}, 2, "clock.json: clock-sync: probe 0"},
		{"bad usage", []string{"-usage", td("not-jsonl.txt"), td("disagg.jsonl")}, 2, "usage:"},
		{"negative top", []string{"-top", "-1", td("disagg.jsonl")}, 2, "-top"},
		{"unwritable html", []string{"-html", filepath.Join(dir, "no", "such", "dir.html"), td("disagg.jsonl")}, 1, "create HTML report"},
		{"directory as input", []string{dir}, 2, "is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := run(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.msg) {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, errOut)
			}
		})
	}
}
