package parse

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/parse/parsetest"
)

// edit derives a body from a: the bytes of ops say which lines change
// and how (a value changed, a line removed, repeated, swapped with the
// next, a byte of its text changed, a malformed line inserted), as a
// target's next exposition may differ from its last.
func edit(a string, ops []byte) string {
	lines := strings.Split(a, "\n")
	for len(ops) >= 2 && len(lines) > 0 {
		op, j := ops[0]%7, int(ops[1])%len(lines)
		ops = ops[2:]
		switch op {
		case 0, 1: // a new value
			if sp := strings.LastIndexByte(lines[j], ' '); sp > 0 {
				lines[j] = lines[j][:sp+1] + strconv.Itoa(int(op)*int(j)+len(ops))
			}
		case 2:
			lines = append(lines[:j], lines[j+1:]...)
		case 3:
			lines = append(lines[:j+1], lines[j:]...)
		case 4:
			if j+1 < len(lines) {
				lines[j], lines[j+1] = lines[j+1], lines[j]
			}
		case 5: // a byte of the text, often of a label value or name
			if l := lines[j]; len(l) > 0 && len(ops) > 0 {
				k := int(ops[0]) % len(l)
				lines[j] = l[:k] + string(rune('0'+ops[0]%75)) + l[k+1:]
				ops = ops[1:]
			}
		case 6:
			lines = append(lines[:j], append([]string{"a{b=\"c\" 1"}, lines[j:]...)...)
		}
	}
	return strings.Join(lines, "\n")
}

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
		b := edit(a, ops)
		c := edit(b, append(ops[min(len(ops), 2):], 1, 2))
		for _, wanted := range []func(string) bool{nil, oddName} {
			p := &Parser{Wanted: wanted}
			for i, body := range []string{a, a, b, b, c, a, b} {
				g, err := viaParser(p, []byte(body), "")
				got := fmt.Sprint(g, err)
				first, second := readFresh(body, wanted)
				if got != first && got != second {
					t.Fatalf("read %d of %q:\n got   %s\n fresh %s", i, body, got, first)
				}
				if first != second {
					t.Fatalf("a new parser reads %q twice differently:\n %s\n %s", body, first, second)
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
	f("a type line removed", nil,
		"# TYPE a counter\n# TYPE b counter\na 1\nb 2\n", "# TYPE a counter\n# TYPE b counter\na 1\nb 2\n",
		"# TYPE b counter\na 1\nb 2\n", "# TYPE a counter\n# TYPE b counter\na 1\nb 2\n", "# TYPE a counter\na 1\nb 2\n")
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
		g, err := viaParser(p, body, "")
		if err != nil {
			t.Fatal(err)
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
