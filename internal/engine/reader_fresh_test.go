package engine

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/parse/parsetest"
)

// readFresh is the oracle for a Reader that read other bodies before: a
// new Reader reading body.
func readFresh(body []byte, role Role) string {
	o, err := NewReader(EngineAuto, role, KVAuto).Read(body, "")
	return fmt.Sprintf("%+v %v", o, err)
}

// readerAgrees reads bodies in order with one Reader and checks every
// observation against a new Reader's on the same body.
func readerAgrees(t *testing.T, role Role, bodies ...[]byte) {
	t.Helper()
	r := NewReader(EngineAuto, role, KVAuto)
	for i, body := range bodies {
		o, err := r.Read(body, "")
		got := fmt.Sprintf("%+v %v", o, err)
		if want := readFresh(body, role); got != want {
			t.Fatalf("read %d:\n got   %s\n fresh %s", i, got, want)
		}
		r.Evict(4)
	}
}

// FuzzReaderAgreesWithFreshReader: a Reader whose caches (by series text,
// by the sample's place in the exposition, a histogram's bucket places)
// hold what earlier bodies gave reads a body derived from them as a new
// Reader does.
func FuzzReaderAgreesWithFreshReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	limit := 64 << 10
	if flag.Lookup("test.fuzz").Value.String() != "" {
		limit = 16 << 10 // larger bodies are too slow to mutate
	}
	for i, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < limit {
			f.Add(b, []byte{0, byte(i), 4, byte(7 * i), 2, byte(i)})
		}
	}
	f.Fuzz(func(t *testing.T, a []byte, ops []byte) {
		b := []byte(parsetest.Edit(string(a), ops))
		c := []byte(parsetest.Edit(string(b), append(ops[min(len(ops), 2):], 4, 9)))
		for _, role := range []Role{RoleUnknown, Prefill} {
			readerAgrees(t, role, a, a, b, b, c, a, b)
		}
	})
}

// Successive expositions of the captures, and ones whose series move:
// lines swapped (a histogram's buckets out of order), removed, repeated.
func TestReaderAgreesWithFreshReader(t *testing.T) {
	for _, name := range []string{"vllm_dp4_1504.txt", "vllm_prefill_flagcx.txt", "sglang_decode_dp.txt", "trtllm_worker.txt"} {
		body, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		seq := append([][]byte{body, body}, parsetest.Successive(body, 3, 0.7, 3)...)
		for _, ops := range [][]byte{{4, 40}, {4, 41, 4, 60}, {2, 50}, {3, 70}, {5, 30, 9}, {6, 20}} {
			seq = append(seq, []byte(parsetest.Edit(string(seq[len(seq)-1]), ops)), seq[len(seq)-1])
		}
		t.Run(name, func(t *testing.T) { readerAgrees(t, Prefill, seq...) })
	}
	// A histogram of four engines whose first engine loses a bucket, and
	// has two buckets swapped: the other engines' buckets are found
	// where they now are.
	body, err := os.ReadFile("testdata/vllm_dp4_1504.txt")
	if err != nil {
		t.Fatal(err)
	}
	seq := parsetest.Successive(body, 3, 0.7, 4)
	last := strings.Split(string(seq[2]), "\n")
	const bucket = `vllm:time_to_first_token_seconds_bucket{engine="0",le="0.005",`
	if !strings.HasPrefix(last[610], bucket) {
		t.Fatalf("line 611 is %q, want a bucket of engine 0", last[610])
	}
	removed := slices.Delete(slices.Clone(last), 610, 611)
	swapped := slices.Clone(last)
	swapped[611], swapped[612] = swapped[612], swapped[611]
	for _, b := range [][]string{removed, swapped} {
		seq = append(seq, []byte(strings.Join(b, "\n")), seq[2])
	}
	readerAgrees(t, Prefill, seq...)
	r := NewReader(EngineAuto, Prefill, KVAuto)
	for i, body := range seq {
		o, err := r.Read(body, "")
		if err != nil {
			t.Fatal(err)
		}
		got := map[float64]float64{}
		for _, b := range o.Histograms[TTFT.HistogramIndex()].Buckets {
			got[b.UpperBound] = b.Count
		}
		if want := ttftBuckets(t, body); !maps.Equal(got, want) {
			t.Errorf("read %d: TTFT buckets %v, the body's %v", i, got, want)
		}
	}
}

// ttftBuckets sums vLLM's TTFT buckets of every engine by le, from the
// text of the body.
func ttftBuckets(t *testing.T, body []byte) map[float64]float64 {
	sums := map[float64]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "vllm:time_to_first_token_seconds_bucket{") {
			continue
		}
		le := line[strings.Index(line, `le="`)+4:]
		le = le[:strings.IndexByte(le, '"')]
		bound, err := strconv.ParseFloat(strings.Replace(le, "+Inf", "Inf", 1), 64)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatal(err)
		}
		sums[bound] += v
	}
	return sums
}

// Histogram.addAt, whatever its hints, gives the buckets add gives: the
// hint only spares the search.
func TestAddAtAgreesWithAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	bounds := []float64{0.001, 0.01, 0.1, 1, 10, math.Inf(1), math.NaN()}
	for range 5000 {
		var viaAdd, viaAddAt Histogram
		nan := false
		for range 1 + rng.IntN(12) {
			le, v := bounds[rng.IntN(len(bounds))], float64(rng.IntN(5))
			hint := int32(rng.IntN(len(viaAddAt.Buckets) + 2))
			nan = nan || math.IsNaN(le)
			viaAdd.add(le, v)
			viaAddAt.addAt(le, v, &hint, !nan)
		}
		if fmt.Sprint(viaAdd.Buckets) != fmt.Sprint(viaAddAt.Buckets) {
			t.Fatalf("add %v, addAt %v", viaAdd.Buckets, viaAddAt.Buckets)
		}
	}
}
