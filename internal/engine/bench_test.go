package engine

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/ptdmon/ptdmon/internal/parse/parsetest"
)

// bigVLLM builds a realistic vLLM exposition: the prefill and decode
// captures, with every engine="N" sample repeated for a DP of dp engines.
func bigVLLM(tb testing.TB, dp int) []byte {
	tb.Helper()
	var out bytes.Buffer
	seriesSeen := map[string]bool{}
	for fi, f := range []string{"testdata/vllm_prefill_flagcx.txt", "testdata/vllm_decode_nixl.txt"} {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if strings.HasPrefix(line, "#") {
				// Both captures declare some families; keep the first.
				if seen[line] {
					continue
				}
				seen[line] = true
				out.WriteString(line + "\n")
				continue
			}
			if !strings.Contains(line, `engine="0"`) {
				// A series both captures carry is kept once: two values
				// of one series make a duplicate, which is an error.
				series := line[:strings.LastIndexByte(line, ' ')]
				if !strings.Contains(line, `engine="`) && !seriesSeen[series] {
					seriesSeen[series] = true
					out.WriteString(line + "\n")
				}
				continue
			}
			for e := 0; e < dp; e++ {
				out.WriteString(strings.Replace(line, `engine="0"`, fmt.Sprintf(`engine="%d"`, fi*dp+e), 1) + "\n")
			}
		}
	}
	return out.Bytes()
}

func countSamples(b []byte) int {
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) > 0 && line[0] != '#' {
			n++
		}
	}
	return n
}

// The expfmt exposition has each family once; bigVLLM interleaves the two
// captures' families, which expfmt rejects, so it gets a de-interleaved copy.
func groupedForExpfmt(b []byte) []byte {
	type fam struct {
		meta  []string
		lines []string
	}
	var order []string
	fams := map[string]*fam{}
	cur := ""
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
			name := strings.Fields(line)[2]
			cur = name
			if fams[name] == nil {
				fams[name] = &fam{}
				order = append(order, name)
			}
			fams[name].meta = append(fams[name].meta, line)
			continue
		}
		fams[cur].lines = append(fams[cur].lines, line)
	}
	var out bytes.Buffer
	for _, n := range order {
		seen := map[string]bool{}
		for _, m := range fams[n].meta {
			if !seen[m] {
				seen[m] = true
				out.WriteString(m + "\n")
			}
		}
		for _, l := range fams[n].lines {
			out.WriteString(l + "\n")
		}
	}
	return out.Bytes()
}

func BenchmarkReadVLLM(b *testing.B) {
	body := bigVLLM(b, 8)
	n := countSamples(body)
	if n < 1500 {
		b.Fatalf("benchmark exposition has %d samples, want ≥ 1500", n)
	}
	r := NewReader(EngineAuto, Prefill, KVAuto)
	if _, err := r.Read(body, ""); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Read(body, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "samples/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
}

// BenchmarkReadVLLMExpfmt does the same work (parse, classify, aggregate)
// through expfmt, the baseline the collector is measured against.
func BenchmarkReadVLLMExpfmt(b *testing.B) {
	body := groupedForExpfmt(bigVLLM(b, 8))
	n := countSamples(body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := readExpfmt(body); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "samples/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
}

func readExpfmt(body []byte) error {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return err
	}
	r := NewReader(EngineAuto, Prefill, KVAuto)
	var kept []staged
	for name, mf := range fams {
		t := model.MetricType(strings.ToLower(mf.GetType().String()))
		for _, m := range mf.Metric {
			lb := labels.NewScratchBuilder(len(m.Label) + 2)
			for _, lp := range m.Label {
				lb.Add(lp.GetName(), lp.GetValue())
			}
			emit := func(series string, v float64, extra ...string) {
				b2 := labels.NewScratchBuilder(len(m.Label) + 2)
				lb.Labels().Range(func(l labels.Label) { b2.Add(l.Name, l.Value) })
				b2.Add(labels.MetricName, series)
				for i := 0; i < len(extra); i += 2 {
					b2.Add(extra[i], extra[i+1])
				}
				b2.Sort()
				r.lbls = b2.Labels()
				m, fam := split(r.classify(series, t))
				m.binding = &fam
				if m.use {
					kept = append(kept, staged{&entry{meaning: &m}, m.metric, v})
				}
			}
			switch {
			case m.Counter != nil:
				emit(name, m.Counter.GetValue())
			case m.Gauge != nil:
				emit(name, m.Gauge.GetValue())
			case m.Histogram != nil:
				for _, bk := range m.Histogram.Bucket {
					emit(name+"_bucket", float64(bk.GetCumulativeCount()), "le", fmt.Sprint(bk.GetUpperBound()))
				}
				emit(name+"_sum", m.Histogram.GetSampleSum())
				emit(name+"_count", float64(m.Histogram.GetSampleCount()))
			}
		}
	}
	r.staged = kept
	return r.finish(&r.obs)
}

// BenchmarkReadVLLMOpenMetrics is the same exposition as Python's client
// writes it when the Accept header names OpenMetrics, which is what vLLM
// and SGLang answer to the collector's Accept header.
func BenchmarkReadVLLMOpenMetrics(b *testing.B) {
	body := []byte(toOpenMetrics(string(groupedForExpfmt(bigVLLM(b, 8)))))
	n := countSamples(body) - 1 // # EOF
	r := NewReader(EngineAuto, Prefill, KVAuto)
	const ct = "application/openmetrics-text; version=1.0.0; charset=utf-8"
	if _, err := r.Read(body, ct); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Read(body, ct); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "samples/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
}

// BenchmarkReadVLLMDP4 reads a 1,504-series exposition of one vLLM API
// server with four data-parallel engines, every family vLLM writes
// included, evicting stale series after every read as the collector does.
func BenchmarkReadVLLMDP4(b *testing.B) {
	body, err := os.ReadFile("testdata/vllm_dp4_1504.txt")
	if err != nil {
		b.Fatal(err)
	}
	benchReadDP4(b, body, [][]byte{body})
}

// BenchmarkReadVLLMDP4Successive reads successive expositions of the
// server of BenchmarkReadVLLMDP4, about 70% of the values changed from one
// to the next as between two scrapes 1 s apart; the expositions are made
// before the timer starts.
func BenchmarkReadVLLMDP4Successive(b *testing.B) {
	body, err := os.ReadFile("testdata/vllm_dp4_1504.txt")
	if err != nil {
		b.Fatal(err)
	}
	benchReadDP4(b, body, parsetest.Successive(body, 16, 0.7, 1))
}

// benchReadDP4 reads bodies in turn after a first read of body, evicting
// stale series after every read as the collector does.
func benchReadDP4(b *testing.B, body []byte, bodies [][]byte) {
	n := countSamples(body)
	r := NewReader(EngineAuto, Prefill, KVAuto)
	if _, err := r.Read(body, ""); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Read(bodies[i%len(bodies)], ""); err != nil {
			b.Fatal(err)
		}
		r.Evict(4)
	}
	b.ReportMetric(float64(n), "samples/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
}
