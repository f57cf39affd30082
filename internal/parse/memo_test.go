package parse

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/ptdmon/ptdmon/internal/parse/parsetest"
)

// readFresh is the oracle for a parser that read other bodies before: a
// new parser reading body, twice (its second read is the scanner's).
func readFresh(body string, wanted func(string) bool) (first, second string) {
	p := &Parser{Wanted: wanted}
	g1, err1 := viaParser(p, []byte(body), "")
	g2, err2 := viaParser(p, []byte(body), "")
	return fmt.Sprint(g1, err1), fmt.Sprint(g2, err2)
}

// FuzzMemoAgreesWithFreshParser: a parser that read a body and then reads
// another one derived from it visits exactly the samples (names, series,
// labels, types, value bits) and gives exactly the errors (duplicates
// included) a new parser gives on the second body alone, and so on for a
// third body, the first again.
func FuzzMemoAgreesWithFreshParser(f *testing.F) {
	for i, s := range seedBodies(f) {
		f.Add(s, []byte{0, byte(i), 5, byte(3 * i), 7})
		f.Add(s, []byte{2, byte(i), 1, 3})
	}
	f.Fuzz(func(t *testing.T, a string, ops []byte) {
		b := parsetest.Edit(a, ops)
		c := parsetest.Edit(b, append(ops[min(len(ops), 2):], 1, 2))
		for _, wanted := range []func(string) bool{nil, oddName} {
			p := &Parser{Wanted: wanted}
			var last []string // the series the last body read in full visited, in order
			for i, body := range []string{a, a, b, b, c, a, b} {
				var g []got
				var ls labels.Labels
				var same []bool
				err := p.Parse([]byte(body), "", func(s *Sample) error {
					p.Labels(&ls)
					g = append(g, got{string(s.Name), string(s.Series), ls.String(), string(s.Type), math.Float64bits(s.Value)})
					same = append(same, s.Same)
					return nil
				})
				got := fmt.Sprint(g, err)
				first, second := readFresh(body, wanted)
				if got != first && got != second {
					t.Fatalf("read %d of %q:\n got   %s\n fresh %s", i, body, got, first)
				}
				if first != second {
					t.Fatalf("a new parser reads %q twice differently:\n %s\n %s", body, first, second)
				}
				for j := range same {
					if same[j] && (j >= len(last) || last[j] != g[j].series) {
						t.Fatalf("read %d of %q: sample %d (%s) is the Same as the last body's %q", i, body, j, g[j].series, last)
					}
				}
				last = nil
				if err == nil {
					for _, s := range g {
						last = append(last, s.series)
					}
				}
			}
		}
	})
}

// The memo's edge cases, each against a new parser reading the same body.
func TestMemoEdges(t *testing.T) {
	f := func(name string, wanted func(string) bool, bodies ...string) {
		t.Helper()
		p := &Parser{Wanted: wanted}
		for i, body := range bodies {
			g, err := viaParser(p, []byte(body), "")
			got := fmt.Sprint(g, err)
			if first, _ := readFresh(body, wanted); got != first {
				t.Errorf("%s: body %d:\n got   %s\n fresh %s", name, i, got, first)
			}
		}
	}
	three := "a{x=\"1\"} 1\na{x=\"2\"} 2\na{x=\"3\"} 3\n"
	f("a line removed in the middle", nil, three, three, "a{x=\"1\"} 5\na{x=\"3\"} 6\n", three)
	f("a line added in the middle", nil, three, three, "a{x=\"1\"} 5\na{x=\"9\"} 1\na{x=\"2\"} 6\na{x=\"3\"} 7\n", three)
	f("one series under another type line", nil,
		"# TYPE a counter\na 1\n", "# TYPE a counter\na 2\n", "# TYPE a gauge\na 3\n", "a 4\n", "# TYPE a_total counter\na 5\n")
	f("a line whose name changes its wantedness", oddName,
		"a 1\nbb 2\nccc 3\n", "a 1\nbb 2\nccc 3\n", "bb 1\na 2\nccc 3\n", "a 1\nbb 2\nccc 3\n")
	f("a longer series with the same start", nil, "a 1\na 1\n", "a 1\na 1\n", "a 2\nab 1\n", "a 1\na_b 1\n", "a 1\na{b=\"c\"} 1\n")
	f("a body that fails halfway, then a good one", nil,
		three, three, "a{x=\"1\"} 5\na{x=\"2 6\na{x=\"3\"} 7\n", "a{x=\"1\"} 5\na{x=\"2\"} 6\na{x=\"3\"} 7\n", three)
	f("a value that is no float", nil, three, three, "a{x=\"1\"} 5\na{x=\"2\"} 0x\na{x=\"3\"} 7\n", three)
	f("a duplicate where a series was", nil, three, three, "a{x=\"1\"} 5\na{x=\"1\"} 6\na{x=\"3\"} 7\n", three)
	f("a duplicate with one value", nil, three, "a{x=\"1\"} 5\na{x=\"1\"} 5\na{x=\"3\"} 7\n", "a{x=\"1\"} 5\na{x=\"1\"} 6\na{x=\"3\"} 7\n")
	f("a timestamp added", nil, three, three, "a{x=\"1\"} 5 1000\na{x=\"2\"} 6 99999999999999999999\na{x=\"3\"} 7\n")
	f("no blank after the series", nil, three, three, "a{x=\"1\"}5\na{x=\"2\"}\t6\na{x=\"3\"}{ 7\n")
	onlyAB := func(name string) bool { return name == "ab" }
	f("another name of the same length", onlyAB, "ab 1\ncd 2\n", "ab 1\ncd 2\n", "cd 1\nab 2\n", "ab 3\nab{x=\"\"} 4\n")
	f("an invalid series of the same length", nil, three, three, "a{x=1\"2} 5\na{x=\"2\"} 6\na{x=\"\xff\"} 7\n", three)
	f("a type line changed", nil,
		"# TYPE a gauge\na 1\n", "# TYPE a gauge\na 1\n", "# TYPE a count\na 2\n", "# TYPE b gauge\na 3\n", "# TYPE a gauge\na 4\n",
		"# TYPE a gauge \na 5\n", "# HELP a gauge\na 6\n", "# TYPE a gauge\na 7\n", "# TYPE a_ gauge\na_ 7\n")
	f("a help text changed", nil,
		"# HELP a x\n# TYPE a gauge\na 1\n", "# HELP a x\n# TYPE a gauge\na 1\n", "# HELP a \xff\n# TYPE a gauge\na 2\n",
		"# HELP a x\n# TYPE a gauge\na 1\n", "# HELP a y\n# TYPE a gauge\na 1\n", "# HELP a x\n# HELP a gauge\na 1\n")
	twoTypes := "# TYPE a counter\na 1\n# TYPE a gauge\na{x=\"1\"} 2\n# TYPE b gauge\na{x=\"2\"} 3\n"
	f("type lines between one name's samples", nil, twoTypes, twoTypes, twoTypes, twoTypes)
	f("a type line removed", nil,
		"# TYPE a counter\n# TYPE b counter\na 1\nb 2\n", "# TYPE a counter\n# TYPE b counter\na 1\nb 2\n",
		"# TYPE b counter\na 1\nb 2\n", "# TYPE a counter\n# TYPE b counter\na 1\nb 2\n", "# TYPE a counter\na 1\nb 2\n")
	// Past the first 512 bytes a NUL is not taken for a binary body: the
	// scanner leaves it to Prometheus' lexer, which ends the exposition there.
	pad := "# " + strings.Repeat("x", 600) + "\n"
	f("a NUL byte", nil, pad+three, pad+three, pad+"a{x=\"1\"} 5\na{x=\"2\"} 6\x00\na{x=\"3\"} 7\n", pad+three,
		pad+three, pad+"a{x=\"\x00\"} 5\na{x=\"2\"} 6\na{x=\"3\"} 7\n", pad+three,
		pad+three, pad[:300]+"\x00"+pad[301:]+three, pad+three, pad+three, pad+"# x\x00\n"+three, pad+three, "\x00"+pad+three)
	f("a name without labels", nil, "a 1\nb 2\n", "a 1\nb 2\n", "a{} 1\nb{} 2\n", "a 1\nb\t2\n", "a 1\nb {} 2\n")
}

// The memo serves the captures' successive expositions: every sample line
// after the first two reads is one it recalls, and the samples are those
// a new parser visits.
func TestMemoServesSuccessiveExpositions(t *testing.T) {
	body, err := os.ReadFile("../engine/testdata/vllm_dp4_1504.txt")
	if err != nil {
		t.Fatal(err)
	}
	bodies := append([][]byte{body, body}, parsetest.Successive(body, 3, 0.7, 2)...)
	p := &Parser{}
	for i, body := range bodies {
		var g []got
		var ls labels.Labels
		same := 0
		err := p.Parse(body, "", func(s *Sample) error {
			p.Labels(&ls)
			g = append(g, got{string(s.Name), string(s.Series), ls.String(), string(s.Type), math.Float64bits(s.Value)})
			if s.Same {
				same++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if i >= 2 && same != len(g) {
			t.Errorf("read %d: %d of %d samples the Same as in the last exposition", i, same, len(g))
		}
		if first, _ := readFresh(string(body), nil); fmt.Sprint(g, err) != first {
			t.Fatalf("read %d differs from a new parser's", i)
		}
		if i >= 2 && p.hits != p.Samples() {
			t.Errorf("read %d: the memo served %d of %d sample lines", i, p.hits, p.Samples())
		}
		if comments := bytes.Count(body, []byte("\n#")) + 1; i >= 2 && p.metaHits != comments {
			t.Errorf("read %d: the memo served %d of %d comment lines", i, p.metaHits, comments)
		}
	}
}

// Sample.Same holds only after an exposition read in full: a visit that
// stopped a read, or a body that failed, leaves the next read's samples
// not the Same, as what the visit kept is not that of the whole body.
func TestSameAfterAnIncompleteRead(t *testing.T) {
	body := []byte("a{x=\"1\"} 1\na{x=\"2\"} 2\na{x=\"3\"} 3\n")
	stop := errors.New("stop")
	f := func(name string, reads []string, stopAt []int, want []int) {
		t.Helper()
		p := &Parser{}
		for i, b := range reads {
			same, n := 0, 0
			err := p.Parse([]byte(b), "", func(s *Sample) error {
				n++
				if s.Same {
					same++
				}
				if n == stopAt[i] {
					return stop
				}
				return nil
			})
			if err != nil && !errors.Is(err, stop) && b == string(body) {
				t.Fatal(err)
			}
			if same != want[i] {
				t.Errorf("%s: read %d: %d samples the Same, want %d", name, i, same, want[i])
			}
		}
	}
	f("a visit stopped", []string{string(body), string(body), string(body), string(body), string(body)},
		[]int{0, 0, 2, 0, 0}, []int{0, 0, 2, 0, 3})
	f("a body failed", []string{string(body), string(body), "a{x=\"1\"} 1\na{x=\"2\"} x\n", string(body), string(body)},
		[]int{0, 0, 0, 0, 0}, []int{0, 0, 0, 0, 3})
}

// The memo is kept between scrapes: its room follows the exposition, not
// the largest one a target ever sent.
func TestMemoFitsTheExposition(t *testing.T) {
	body, err := os.ReadFile("../engine/testdata/vllm_dp4_1504.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := &Parser{}
	f := func(body []byte, lines, comments int) {
		t.Helper()
		for range 3 {
			if _, err := viaParser(p, body, ""); err != nil {
				t.Fatal(err)
			}
		}
		if len(p.memo.lines) != lines || cap(p.memo.lines) > lines+lines/8+16 {
			t.Errorf("%d sample lines: memo of %d, room for %d", lines, len(p.memo.lines), cap(p.memo.lines))
		}
		if len(p.memo.metas) != comments || cap(p.memo.metas) > comments+comments/8+16 {
			t.Errorf("%d comment lines: memo of %d, room for %d", comments, len(p.memo.metas), cap(p.memo.metas))
		}
	}
	f(body, 1504, bytes.Count(body, []byte("\n#"))+1)
	f([]byte("# TYPE a gauge\na 1\n"), 1, 1)
}

// A line the memo recalls whose name comes first at another place than in
// the last exposition (an earlier line changed) is recalled with its name
// from then on: the steady reads are the scanner's, every line recalled.
func TestMemoFollowsNamesThatMove(t *testing.T) {
	p := &Parser{}
	// Each name has the series it had, so the second body needs no
	// duplicate check; only which name comes first changed.
	a := "a{x=\"1\"} 1\nb{x=\"1\"} 1\na{x=\"2\"} 1\n"
	b := "b{x=\"1\"} 1\na{x=\"1\"} 1\na{x=\"2\"} 1\n"
	for i, body := range []string{a, a, b, b, b} {
		quick := p.quick
		g, err := viaParser(p, []byte(body), "")
		if first, _ := readFresh(body, nil); fmt.Sprint(g, err) != first {
			t.Fatalf("read %d differs from a new parser's", i)
		}
		if i >= 2 && p.quick != quick+1 || i >= 3 && p.hits != 3 {
			t.Errorf("read %d: by the scanner %v, %d of 3 lines recalled", i, p.quick != quick, p.hits)
		}
	}
}

// The memo keeps 32 bits of a series' hash. Lines it takes for the series
// of the last exposition when they are not (a collision, made here by
// giving the memo the new lines' hashes) change their names' digests: the
// body is read by Prometheus' parser, as a new parser reads it.
func TestMemoCollision(t *testing.T) {
	a := "a{x=\"1\"} 1\na{x=\"2\"} 2\na{x=\"3\"} 3\nc 4\n"
	for _, b := range []string{
		"a{x=1\"2} 5\na{x=\"2\"} 6\na{x=\"3\"} 7\nc 8\n",  // an invalid series
		"a{x=\"1\"} 5\nb{x=\"2\"} 6\na{x=\"3\"} 7\nc 8\n", // another name
		"a{x=\"1\"} 5\na{x=\"1\"} 6\na{x=\"3\"} 7\nc 8\n", // a duplicate
		"a{x=\"1\"} 5\na{x=\"2\"} 6\na{x=\"3\"} 7\nd 8\n", // a name wanted or not
	} {
		for _, wanted := range []func(string) bool{nil, func(n string) bool { return n != "d" }} {
			p := &Parser{Wanted: wanted}
			for range 2 {
				if _, err := viaParser(p, []byte(a), ""); err != nil {
					t.Fatal(err)
				}
			}
			for k, line := range strings.Split(strings.TrimSuffix(b, "\n"), "\n") {
				lm := &p.memo.lines[k]
				lm.hash = uint32(hashSeries([]byte(line[:lm.series])))
			}
			g, err := viaParser(p, []byte(b), "")
			if p.hits != 4 {
				t.Fatalf("%q: %d of 4 lines taken for the last exposition's", b, p.hits)
			}
			if first, _ := readFresh(b, wanted); fmt.Sprint(g, err) != first {
				t.Errorf("%q:\n got   %s\n fresh %s", b, fmt.Sprint(g, err), first)
			}
		}
	}
}

// A recalled line after one that was not is visited at another place when
// the lines before it changed which of them are wanted: it is not the Same.
func TestSameFollowsThePlace(t *testing.T) {
	p := &Parser{Wanted: oddName}
	a, b := "uu 1\nx 2\nw 3\n", "w 3\nx 2\nuu 1\n" // each name keeps its one series
	for i, body := range []string{a, a, b, b} {
		var visited []string
		var same []bool
		if err := p.Parse([]byte(body), "", func(s *Sample) error {
			visited, same = append(visited, string(s.Series)), append(same, s.Same)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := map[int][]bool{2: {false, false}, 3: {true, true}}[i]
		if want != nil && fmt.Sprint(same) != fmt.Sprint(want) {
			t.Errorf("read %d visits %v, the Same %v, want %v", i, visited, same, want)
		}
	}
}
