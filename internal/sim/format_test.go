package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// fixtureDir holds real excerpts from users' reports; each file's first
// line names its source.
const fixtureDir = "../engine/testdata/reports"

// simOutputs renders every instance of a model after some traffic, keyed by
// engine, plus SGLang old-form and DP variants.
func simOutputs(t *testing.T) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	add := func(sc Scenario) {
		m, err := NewModel(sc, 1, testEpoch)
		if err != nil {
			t.Fatal(err)
		}
		m.AdvanceTo(30 * time.Second)
		for _, in := range m.Instances() {
			b, _, err := m.Exposition(in.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			out[in.Engine] = append(out[in.Engine], b)
		}
	}
	add(mixedScenario())
	old := baseScenario()
	old.Groups = old.Groups[1:]
	old.Groups[0].OldKVGauge, old.Groups[0].OldQueueName = true, true
	old.Groups[0].Prefill.DP = 2
	add(old)
	return out
}

type famShape struct {
	typ    dto.MetricType
	labels []string
}

func shapes(fams map[string]*dto.MetricFamily) map[string]famShape {
	out := map[string]famShape{}
	for name, f := range fams {
		set := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				set[l.GetName()] = true
			}
		}
		var ls []string
		for l := range set {
			ls = append(ls, l)
		}
		sort.Strings(ls)
		out[name] = famShape{f.GetType(), ls}
	}
	return out
}

// Families present in the real captures must be present in the simulator's
// output with the same type and the same label names. Differences are only
// allowed where the capture is from an older engine version, and each such
// exception is listed (so a new divergence fails the test).
func TestFixtureFamiliesMatch(t *testing.T) {
	dir := fixtureDir
	sim := simOutputs(t)
	simShapes := map[string]map[string][]famShape{} // engine -> family -> shapes seen
	for eng, bodies := range sim {
		simShapes[eng] = map[string][]famShape{}
		for _, b := range bodies {
			for n, s := range shapes(parseExpo(t, b)) {
				simShapes[eng][n] = append(simShapes[eng][n], s)
			}
		}
	}
	// Deprecated in vLLM 0.9 and gone from the newest PrometheusStatLogger,
	// which the simulator follows; the fixture is vLLM 0.10.0.
	deprecated := map[string]bool{
		"vllm:gpu_prefix_cache_queries_created": true,
		"vllm:gpu_prefix_cache_hits_total":      true,
		"vllm:gpu_prefix_cache_hits_created":    true,
	}
	// SGLang ~0.4.4 (PR #4412) predates the pp_rank/tp_rank scheduler labels.
	olderLabels := map[string][]string{"sglang_pr_4412.txt": {"pp_rank", "tp_rank"}}

	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	checked := 0
	for _, f := range files {
		base := filepath.Base(f)
		var eng ptd.Engine
		switch {
		case strings.HasPrefix(base, "vllm_"):
			eng = ptd.VLLM
		case strings.HasPrefix(base, "sglang_"):
			eng = ptd.SGLang
		default:
			t.Logf("%s: no simulator format for this engine (TensorRT-LLM), skipped", base)
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("# source:")) {
			t.Errorf("%s: fixture does not start with # source:", base)
		}
		for name, fs := range shapes(parseExpo(t, data)) {
			checked++
			if deprecated[name] {
				if _, ok := simShapes[string(eng)][name]; ok {
					t.Errorf("%s: %s is listed as deprecated but the simulator emits it", base, name)
				}
				continue
			}
			want := fs
			simName := name
			if fs.typ == dto.MetricType_UNTYPED {
				// Excerpt without TYPE line: _bucket/_sum/_count of a histogram.
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if strings.HasSuffix(name, suf) {
						simName = strings.TrimSuffix(name, suf)
						want = famShape{dto.MetricType_HISTOGRAM, slices.DeleteFunc(slices.Clone(fs.labels), func(s string) bool { return s == "le" })}
					}
				}
			}
			got, ok := simShapes[string(eng)][simName]
			if !ok {
				t.Errorf("%s: family %s (%v) not emitted by the simulator", base, simName, want.typ)
				continue
			}
			match := false
			for _, g := range got {
				gl := g.labels
				if drop := olderLabels[base]; drop != nil {
					gl = slices.DeleteFunc(slices.Clone(gl), func(s string) bool { return slices.Contains(drop, s) })
				}
				// A family whose TYPE line was cut off the excerpt has no
				// type to compare; its label names still must match.
				typeOK := g.typ == want.typ || want.typ == dto.MetricType_UNTYPED
				if typeOK && slices.Equal(gl, want.labels) {
					match = true
				}
			}
			if !match {
				t.Errorf("%s: %s: fixture %v %v, simulator %v", base, simName, want.typ, want.labels, got)
			}
		}
	}
	if checked < 8 {
		t.Fatalf("only %d fixture families checked", checked)
	}
}

// The `le` strings of the capture are the simulator's `le` strings.
func TestFixtureBucketBounds(t *testing.T) {
	dir := fixtureDir
	data, err := os.ReadFile(filepath.Join(dir, "vllm_pr_22227.txt"))
	if err != nil {
		t.Fatal(err)
	}
	les := regexp.MustCompile(`le="([^"]+)"`).FindAllStringSubmatch(string(data), -1)
	if len(les) < 5 {
		t.Fatal("fixture has no buckets")
	}
	for _, m := range les {
		if !slices.Contains(vllmRequestLatencyBuckets.le, m[1]) {
			t.Errorf("fixture le=%q not among simulator buckets %v", m[1], vllmRequestLatencyBuckets.le)
		}
	}
}

var (
	pySample   = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$`)
	pyValue    = regexp.MustCompile(`^(-?\d+\.\d+(e[+-]\d+)?|-?\d(\.\d+)?e[+-]\d{2,3}|\+Inf|-Inf|NaN)$`)
	labelNames = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
)

// Line-level details a structural parse cannot see: labels printed sorted,
// values printed the Python way, HELP before TYPE, _created only on vLLM.
func TestPythonClientTextDetails(t *testing.T) {
	for eng, bodies := range simOutputs(t) {
		for _, b := range bodies {
			created := false
			var lastComment string
			for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
				if strings.HasPrefix(line, "# TYPE ") {
					if !strings.HasPrefix(lastComment, "# HELP ") {
						t.Fatalf("%s: TYPE without preceding HELP: %q", eng, line)
					}
				}
				if strings.HasPrefix(line, "#") {
					lastComment = line
					continue
				}
				lastComment = ""
				m := pySample.FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("%s: bad sample line %q", eng, line)
				}
				if !pyValue.MatchString(m[3]) {
					t.Fatalf("%s: value not printed like Python: %q", eng, line)
				}
				var names []string
				for _, x := range labelNames.FindAllStringSubmatch(m[2], -1) {
					names = append(names, x[1])
				}
				if !sort.StringsAreSorted(names) {
					t.Fatalf("%s: labels not sorted: %q", eng, line)
				}
				if strings.HasSuffix(m[1], "_created") {
					created = true
				}
				if eng == string(ptd.VLLM) && !slices.Contains(names, "engine") && !slices.Contains(names, "model_name") {
					t.Fatalf("vllm sample without engine/model_name: %q", line)
				}
			}
			if created != (eng == string(ptd.VLLM)) {
				t.Fatalf("%s: _created present=%v", eng, created)
			}
		}
	}
}

func TestVLLMFamilies(t *testing.T) {
	m, _ := NewModel(mixedScenario(), 2, testEpoch)
	m.AdvanceTo(20 * time.Second)
	body, _, _ := m.Exposition("flagcx-p0", nil)
	fams := parseExpo(t, body)
	succ := fams["vllm:request_success_total"]
	if succ.GetType() != dto.MetricType_COUNTER {
		t.Fatal("request_success_total is not a counter")
	}
	// 2 DP engines × 5 pre-created reasons.
	seen := map[string]bool{}
	for _, mt := range succ.GetMetric() {
		e, _ := labelOf(mt, "engine")
		r, _ := labelOf(mt, "finished_reason")
		seen[e+"/"+r] = true
	}
	for _, e := range []string{"0", "1"} {
		for _, r := range finishReasons {
			if !seen[e+"/"+r] {
				t.Errorf("missing request_success_total{engine=%q,finished_reason=%q}", e, r)
			}
		}
	}
	for _, n := range []string{
		"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:prefix_cache_queries_total",
		"vllm:prefix_cache_hits_total", "vllm:num_preemptions_total", "vllm:time_to_first_token_seconds",
		"vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
		"vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
		"vllm:flagcx_total_bytes_transferred_total", "vllm:flagcx_transfers_total", "vllm:flagcx_num_failed_transfers_total",
		"vllm:flagcx_num_failed_recvs_total", "vllm:flagcx_num_kv_expired_reqs_total", "vllm:flagcx_xfer_time_seconds",
		"vllm:flagcx_bytes_transferred", "vllm:flagcx_total_bytes_transferred_created",
	} {
		if fams[n] == nil {
			t.Errorf("family %s missing", n)
		}
	}
	body, _, _ = m.Exposition("nixl-d0", nil)
	fams = parseExpo(t, body)
	if f := fams["vllm:nixl_bytes_transferred"]; f.GetType() != dto.MetricType_HISTOGRAM || f.GetMetric()[0].GetHistogram().GetSampleCount() == 0 {
		t.Fatal("NIXL bytes histogram missing or not advancing on decode")
	}
	if fams["vllm:flagcx_transfers_total"] != nil {
		t.Fatal("NIXL instance exports FlagCX families")
	}
}

func TestSGLangFamilies(t *testing.T) {
	sc := mixedScenario()
	m, _ := NewModel(sc, 2, testEpoch)
	// Lazily created series are absent before the first event.
	b0, _, _ := m.Exposition("sglang-p0", nil)
	if f := parseExpo(t, b0); f["sglang:num_requests_total"] != nil || f["sglang:kv_transfer_total_mb"] != nil {
		t.Fatal("tokenizer/KV series present before any request")
	}
	m.AdvanceTo(20 * time.Second)
	bp, _, _ := m.Exposition("sglang-p0", nil)
	p := parseExpo(t, bp)
	for _, n := range []string{"sglang:num_prefill_bootstrap_queue_reqs", "sglang:num_prefill_inflight_queue_reqs",
		"sglang:num_decode_prealloc_queue_reqs", "sglang:num_decode_transfer_queue_reqs", "sglang:num_requests_total",
		"sglang:prompt_tokens_total", "sglang:generation_tokens_total", "sglang:e2e_request_latency_seconds"} {
		if p[n] == nil {
			t.Errorf("prefill: %s missing", n)
		}
	}
	kv := p["sglang:kv_transfer_total_mb"]
	if kv.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatal("kv_transfer_total_mb is not a histogram")
	}
	if s := kv.GetMetric()[0].GetHistogram().GetSampleSum(); s != float64(kv.GetMetric()[0].GetHistogram().GetSampleCount())*float64(LlamaKVBytes)/(1<<20) {
		t.Fatalf("MB sum %v is not transfers × B/2^20", s)
	}
	if et, _ := labelOf(p["sglang:num_requests_total"].GetMetric()[0], "engine_type"); et != "prefill" {
		t.Fatalf("engine_type = %q", et)
	}
	pid := p["sglang:num_retracted_reqs"].GetMetric()[0]
	if _, ok := labelOf(pid, "pid"); !ok {
		t.Fatal("num_retracted_reqs lacks pid")
	}
	if _, ok := labelOf(p["sglang:num_running_reqs"].GetMetric()[0], "pid"); ok {
		t.Fatal("mostrecent gauge has pid")
	}
	bd, _, _ := m.Exposition("sglang-d0", nil)
	d := parseExpo(t, bd)
	if d["sglang:time_to_first_token_seconds"] == nil || d["sglang:kv_transfer_total_mb"] != nil {
		t.Fatal("decode: TTFT should be present, KV MB absent")
	}
	if n := len(d["sglang:num_running_reqs"].GetMetric()); n != 2 {
		t.Fatalf("decode DP=2 should give 2 scheduler series, got %d", n)
	}
	if _, ok := labelOf(d["sglang:num_running_reqs"].GetMetric()[1], "dp_rank"); !ok {
		t.Fatal("DP scheduler series lack dp_rank")
	}
	if len(d["sglang:num_requests_total"].GetMetric()) != 1 {
		t.Fatal("tokenizer series must be one per server")
	}
	// Multiprocess histogram order: _sum first, then buckets, then _count.
	i := bytes.Index(bd, []byte("sglang:e2e_request_latency_seconds_sum"))
	j := bytes.Index(bd, []byte("sglang:e2e_request_latency_seconds_bucket"))
	k := bytes.Index(bd, []byte("sglang:e2e_request_latency_seconds_count"))
	if !(i >= 0 && i < j && j < k) {
		t.Fatal("histogram samples not in multiprocess order")
	}
}

func TestSGLangOldForms(t *testing.T) {
	sc := baseScenario()
	sc.Groups = sc.Groups[1:]
	sc.Groups[0].OldKVGauge, sc.Groups[0].OldQueueName, sc.Groups[0].OmitEngineType = true, true, true
	m, _ := NewModel(sc, 1, testEpoch)
	m.AdvanceTo(20 * time.Second)
	b, _, _ := m.Exposition("sglang-p0", nil)
	f := parseExpo(t, b)
	if f["sglang:kv_transfer_total_mb"].GetType() != dto.MetricType_GAUGE {
		t.Fatal("old form: kv_transfer_total_mb should be a gauge")
	}
	if got := f["sglang:kv_transfer_total_mb"].GetMetric()[0].GetGauge().GetValue(); got != float64(LlamaKVBytes)/(1<<20) {
		t.Fatalf("old gauge = %v MB", got)
	}
	if f["sglang:num_prefill_prealloc_queue_reqs"] == nil || f["sglang:num_prefill_bootstrap_queue_reqs"] != nil {
		t.Fatal("old queue name not used")
	}
	if _, ok := labelOf(f["sglang:num_requests_total"].GetMetric()[0], "engine_type"); ok {
		t.Fatal("old tokenizer metrics must lack engine_type")
	}
}
