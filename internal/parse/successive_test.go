package parse

import (
	"os"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/parse/parsetest"
)

// BenchmarkParseSuccessive reads a sequence of successive expositions of
// one vLLM API server with four DP engines (1,504 series, 182 KB), about
// 70% of the values changed from one to the next, as a target's scrapes
// give them: unlike BenchmarkParse, no read sees the body of the last.
func BenchmarkParseSuccessive(b *testing.B) {
	body, err := os.ReadFile("../engine/testdata/vllm_dp4_1504.txt")
	if err != nil {
		b.Fatal(err)
	}
	bodies := parsetest.Successive(body, 16, 0.7, 1)
	engineOnly := func(name string) bool {
		return strings.HasPrefix(name, "vllm:") && !strings.HasSuffix(name, "_created")
	}
	visit := func(s *Sample) error { return nil }
	run := func(b *testing.B, wanted func(string) bool) {
		p := &Parser{Wanted: wanted}
		if err := p.Parse(body, "text/plain", visit); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := p.Parse(bodies[i%len(bodies)], "text/plain", visit); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.Samples()), "ns/sample")
	}
	b.Run("all", func(b *testing.B) { run(b, nil) })
	b.Run("engine", func(b *testing.B) { run(b, engineOnly) })
}
