package parse

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// flat is one sample as "name{sorted labels} value" for comparison.
func flatLabels(ls labels.Labels) string {
	var b strings.Builder
	b.WriteString(ls.Get(labels.MetricName))
	b.WriteByte('{')
	first := true
	ls.Range(func(l labels.Label) {
		// An empty value is no label (Prometheus' data model): textparse
		// keeps error_type="" where expfmt's builder drops it.
		if l.Name == labels.MetricName || l.Value == "" {
			return
		}
		if l.Name == "le" {
			// Both parsers normalise bounds, each its own way: compare numbers.
			if v, err := strconv.ParseFloat(l.Value, 64); err == nil {
				l.Value = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%s=%q", l.Name, l.Value)
	})
	b.WriteByte('}')
	return b.String()
}

func viaExpo(t *testing.T, body []byte) map[string]float64 {
	t.Helper()
	var p Parser
	var ls labels.Labels
	out := map[string]float64{}
	err := p.Parse(body, "text/plain; version=0.0.4", func(s *Sample) error {
		p.Labels(&ls)
		if got := ls.Get(labels.MetricName); got != string(s.Name) {
			return fmt.Errorf("Sample.Name %q, labels say %q", s.Name, got)
		}
		out[flatLabels(ls)] = s.Value
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// viaExpfmt is the independent oracle: prometheus/common's text parser.
func viaExpfmt(t *testing.T, body []byte) map[string]float64 {
	// expfmt fills in _sum and _count a histogram did not export; those
	// are not samples of the body.
	exported := func(name string) bool {
		return bytes.Contains(body, []byte(name+"{")) || bytes.Contains(body, []byte(name+" "))
	}
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, mf := range fams {
		for _, m := range mf.Metric {
			base := labels.NewBuilder(labels.EmptyLabels())
			for _, lp := range m.Label {
				base.Set(lp.GetName(), lp.GetValue())
			}
			put := func(suffix string, v float64, extra ...string) {
				b := labels.NewBuilder(base.Labels())
				b.Set(labels.MetricName, name+suffix)
				for i := 0; i < len(extra); i += 2 {
					b.Set(extra[i], extra[i+1])
				}
				out[flatLabels(b.Labels())] = v
			}
			switch {
			case m.Counter != nil:
				put("", m.Counter.GetValue())
			case m.Gauge != nil:
				put("", m.Gauge.GetValue())
			case m.Untyped != nil:
				put("", m.Untyped.GetValue())
			case m.Histogram != nil:
				h := m.Histogram
				for _, bk := range h.Bucket {
					put("_bucket", float64(bk.GetCumulativeCount()), "le", formatLE(bk.GetUpperBound()))
				}
				if exported(name + "_sum") {
					put("_sum", h.GetSampleSum())
				}
				if exported(name + "_count") {
					put("_count", float64(h.GetSampleCount()))
				}
			case m.Summary != nil:
				put("_sum", m.Summary.GetSampleSum())
				put("_count", float64(m.Summary.GetSampleCount()))
			}
		}
	}
	return out
}

// formatLE writes a bound as textparse normalises it (OpenMetrics style).
func formatLE(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return model.SampleValue(v).String()
}

func captures(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../engine/testdata/*.txt")
	fixtures, _ := filepath.Glob("../engine/testdata/reports/*.txt")
	for _, f := range fixtures {
		if !strings.Contains(f, "metrics_json") {
			files = append(files, f)
		}
	}
	if len(files) < 8 {
		t.Fatalf("found only %d captures", len(files))
	}
	return files
}

func TestParseAgreesWithExpfmt(t *testing.T) {
	for _, f := range captures(t) {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, want := viaExpo(t, body), viaExpfmt(t, body)
		if len(got) != len(want) {
			t.Errorf("%s: %d samples, expfmt has %d", filepath.Base(f), len(got), len(want))
		}
		var diffs []string
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v && !(math.IsNaN(g) && math.IsNaN(v)) {
				diffs = append(diffs, fmt.Sprintf("%s: ours %v (present %v), expfmt %v", k, g, ok, v))
			}
		}
		sort.Strings(diffs)
		if len(diffs) > 0 {
			t.Errorf("%s: %d differences, first: %s", filepath.Base(f), len(diffs), diffs[0])
		}
	}
}

func TestTypesAndFamilies(t *testing.T) {
	body := []byte(`# TYPE a_total counter
a_total 1
# TYPE a_created gauge
a_created 1.7e9
# TYPE h histogram
h_bucket{le="1"} 1
h_bucket{le="+Inf"} 2
h_sum 3
h_count 2
untyped_after_h 5
`)
	var p Parser
	var got []string
	if err := p.Parse(body, "", func(s *Sample) error {
		got = append(got, fmt.Sprintf("%s:%s", s.Name, s.Type))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := "a_total:counter a_created:gauge h_bucket:histogram h_bucket:histogram h_sum:histogram h_count:histogram untyped_after_h:unknown"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestFormat(t *testing.T) {
	f := func(ct, want string, wantErr bool) {
		t.Helper()
		got, err := Format(ct)
		if (err != nil) != wantErr || got != want {
			t.Errorf("Format(%q) = %q, %v; want %q, error %v", ct, got, err, want, wantErr)
		}
	}
	f("", "text/plain", false)
	f("text/plain; version=0.0.4; charset=utf-8", "text/plain", false)
	f("application/openmetrics-text; version=1.0.0; charset=utf-8", "application/openmetrics-text", false)
	f("application/json", "", true)
	f("text/html; charset=utf-8", "", true)
	f("application/octet-stream", "text/plain", false)
	f("bogus;;", "", true)
}
