package parse

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
)

// got is one visited sample as the comparisons see it.
type got struct {
	name, series, labels, mtype string
	bits                        uint64
}

// viaParser reads body with p, the labels of every sample included.
func viaParser(p *Parser, body []byte, ct string) ([]got, error) {
	var out []got
	var ls labels.Labels
	err := p.Parse(body, ct, func(s *Sample) error {
		p.Labels(&ls)
		out = append(out, got{string(s.Name), string(s.Series), ls.String(), string(s.Type), math.Float64bits(s.Value)})
		return nil
	})
	return out, err
}

// viaTextparse is the oracle: Prometheus' parser alone, with the rules
// Parse adds on top of it (binary bodies, huge series, a series given
// twice with two values, native histograms) written out independently.
func viaTextparse(body []byte, ct string, wanted func(string) bool) ([]got, error) {
	if _, err := Format(ct); err != nil {
		return nil, err
	}
	if strings.IndexByte(string(body[:min(len(body), 512)]), 0) >= 0 {
		return nil, errors.New("binary")
	}
	var tp textparse.Parser
	if strings.HasPrefix(ct, "application/openmetrics-text") {
		tp = textparse.NewOpenMetricsParser(append([]byte(nil), body...), nil, textparse.WithOMParserSTSeriesSkipped())
	} else {
		tp = textparse.NewPromParser(append([]byte(nil), body...), nil, false)
	}
	values := map[string]uint64{}
	var out []got
	var ls labels.Labels
	for {
		et, err := tp.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch et {
		case textparse.EntryHistogram:
			return nil, errors.New("native histogram")
		case textparse.EntrySeries:
			series, _, v := tp.Series()
			if len(series) > MaxSeriesBytes {
				return nil, errors.New("huge series")
			}
			bits := math.Float64bits(v)
			if prev, ok := values[string(series)]; ok && prev != bits {
				return nil, errors.New("duplicate")
			}
			values[string(series)] = bits
			tp.Labels(&ls)
			name := ls.Get(labels.MetricName)
			if wanted != nil && !wanted(name) {
				continue
			}
			out = append(out, got{name: name, series: string(series), labels: ls.String(), bits: bits})
		}
	}
}

func oddName(name string) bool { return len(name)%2 == 1 }

// FuzzScannerAgreesWithTextparse: for any body, in the text format and in
// OpenMetrics, with and without a name filter, Parse gives the samples,
// values, labels and errors-or-not of Prometheus' parser, on a first read
// and on a second one (where the scanner serves a body it has checked),
// and the same types and error texts as Prometheus' parser does through
// Parse itself.
func FuzzScannerAgreesWithTextparse(f *testing.F) {
	for _, s := range seedBodies(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, ct := range []string{"text/plain; version=0.0.4", "application/openmetrics-text; version=1.0.0"} {
			for _, wanted := range []func(string) bool{nil, oddName} {
				want, wantErr := viaTextparse([]byte(body), ct, wanted)
				p := &Parser{Wanted: wanted}
				ref := &Parser{Wanted: wanted} // Prometheus' parser through Parse, never the scanner
				refGot, refErr := viaParserSlow(ref, []byte(body), ct)
				for read := 1; read <= 3; read++ {
					g, err := viaParser(p, []byte(body), ct)
					if (err == nil) != (wantErr == nil) {
						t.Fatalf("%s read %d: error %v, textparse's %v", ct, read, err, wantErr)
					}
					if fmt.Sprint(err) != fmt.Sprint(refErr) {
						t.Fatalf("%s read %d: error %q, through Prometheus' parser %q", ct, read, err, refErr)
					}
					if err != nil {
						continue
					}
					if len(g) != len(want) || len(g) != len(refGot) {
						t.Fatalf("%s read %d: %d samples, textparse %d, through Prometheus' parser %d", ct, read, len(g), len(want), len(refGot))
					}
					for i := range g {
						w := want[i]
						w.mtype = refGot[i].mtype
						if g[i] != w || g[i] != refGot[i] {
							t.Fatalf("%s read %d sample %d:\n ours    %+v\n oracle  %+v\n through %+v", ct, read, i, g[i], w, refGot[i])
						}
					}
				}
			}
		}
	})
}

// viaParserSlow reads body with Prometheus' parser inside Parse.
func viaParserSlow(p *Parser, body []byte, ct string) ([]got, error) {
	format, err := Format(ct)
	if err != nil {
		return nil, err
	}
	if looksBinary(body) {
		return nil, fmt.Errorf("body: %w (binary data)", ErrNotExposition)
	}
	var out []got
	var ls labels.Labels
	err = p.parse(body, format, func(s *Sample) error {
		p.Labels(&ls)
		out = append(out, got{string(s.Name), string(s.Series), ls.String(), string(s.Type), math.Float64bits(s.Value)})
		return nil
	})
	return out, err
}

func seedBodies(tb testing.TB) []string {
	seeds := []string{
		"", "\n", "a 1", "a 1\n", "a 1 123\n", "a{} 1\n", "a{b=\"c\"} 1\n", "a{b=\"c\",} 1\n",
		"a{b=\"c\" d=\"e\"} 1\n", "a{b=\"c\\\"\\n\\\\x\"} 1\n", "a{b=\"c\"}1\n", "a-1 2\n", "a 1.5e+010\n",
		"a NaN\na2 +Inf\na3 -Inf\na4 0x1p3\na5 1_0\n", "# HELP a x\n# TYPE a counter\na 1\n",
		"# TYPE a gauge\n# TYPE a counter\n", "# TYPE a foo\n", "#  TYPE\ta\tgauge\na 1\n", "# HELP a\n",
		"# HELP a \n", "#HELP a b\n", "# comment\n#\n", " a 1\n", "a {b=\"c\"} 1\n", "{\"a\"} 1\n",
		"a{b=\"c\"} 1\na{b=\"c\"} 2\n", "a{b=\"c\"} 1\na{b=\"c\"} 1\n", "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n",
		"a 1\r\n", "a 1 99999999999999999999\n", "a{b=\"x\ny\"} 1\n", "a 1e999\n", "a 1\x00b 2\n",
		"# TYPE a counter\na_total 1\n# EOF\n", "a{b=\"\xff\"} 1\n", "# HELP a \xff\n",
		"a{le=\"1\"} 1\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\n",
		// Lines that repeat the previous line's name or label-set tail.
		"a{b=\"1\",c=\"a long value of a label\"} 1\na{b=\"2\",c=\"a long value of a label\"} 2\n",
		"a{b=\"1\",c=\"x\"} 1\na{b=1,c=\"x\"} 2\n", "a{b=\"1\",c=\"x\"} 1\na{b=\"2\",c=\"x\"}\n",
		"a{b=\"1\",c=\"x\"} 1\na{b=\"2\" ,c=\"x\"} 2\na{b=\"3\",  c=\"x\"} 3\n", "ab{c=\"d\"} 1\nabc{c=\"d\"} 1\nab 2\n",
		"a{b=\"0123456789abcdefgh\\\"ij\"} 1\n", "a{b=\"0123456789abcdefghij\xff\"} 1\n", "a{b=\"0123456789abcdefghij} 1\n",
		"a{b=\"1\",c=\"2\",d=\"3\",e=\"4\",f=\"5\",g=\"6\",h=\"7\",i=\"8\",j=\"9\"} 1\na{b=\"1\",c=\"2\",d=\"3\",e=\"4\",f=\"5\",g=\"6\",h=\"7\",i=\"8\",j=\"0\"} 1\n",
	}
	files, _ := filepath.Glob("../engine/testdata/*.txt")
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if fuzzing && len(b) > 16<<10 {
			continue // checked by go test; too slow to mutate
		}
		seeds = append(seeds, string(b))
	}
	return seeds
}

// The engines' captures are read by the scanner (from their second read
// on), not handed to Prometheus' parser: otherwise the fast path is a
// promise, not a measurement.
func TestScannerReadsTheCaptures(t *testing.T) {
	files, _ := filepath.Glob("../engine/testdata/*.txt")
	if len(files) < 5 {
		t.Fatalf("%d captures", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p Parser
		for range 3 {
			if _, err := viaParser(&p, b, "text/plain; version=0.0.4"); err != nil {
				t.Fatal(err)
			}
		}
		if p.quick != 2 {
			t.Errorf("%s: %d of 3 reads by the scanner, want 2 (the first checks the series)", filepath.Base(f), p.quick)
		}
	}
}

// A body whose series change is read by Prometheus' parser again, so a
// duplicate that appears later is found.
func TestDuplicateAfterChecked(t *testing.T) {
	var p Parser
	f := func(body string, wantDup bool) {
		t.Helper()
		_, err := viaParser(&p, []byte(body), "")
		if errors.Is(err, ErrDuplicate) != wantDup {
			t.Fatalf("%q: err %v, want duplicate %v", body, err, wantDup)
		}
	}
	f("a{x=\"1\"} 1\na{x=\"2\"} 1\n", false)
	f("a{x=\"1\"} 1\na{x=\"2\"} 1\n", false)
	f("a{x=\"1\"} 1\na{x=\"1\"} 2\n", true)
	// One series twice with one value is valid; the next body gives it two.
	f("b 1\nb 1\n", false)
	f("b 1\nb 1\n", false)
	f("b 1\nb 2\n", true)
}
