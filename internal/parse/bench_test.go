package parse

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkParse reads one vLLM API server with four DP engines (1,504
// series, 182 KB) as a Reader does, every read after the first: with
// Prometheus' parser for every sample (what Parse did before the scanner)
// and with the scanner, first visiting every sample, then only the
// families an engine adapter reads.
func BenchmarkParse(b *testing.B) {
	body, err := os.ReadFile("../engine/testdata/vllm_dp4_1504.txt")
	if err != nil {
		b.Fatal(err)
	}
	engineOnly := func(name string) bool {
		return strings.HasPrefix(name, "vllm:") && !strings.HasSuffix(name, "_created")
	}
	run := func(b *testing.B, wanted func(string) bool, read func(*Parser) error) {
		p := &Parser{Wanted: wanted}
		if err := read(p); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := read(p); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.Samples()), "ns/sample")
	}
	visit := func(s *Sample) error { return nil }
	textparse := func(p *Parser) error { return p.parse(body, "text/plain", visit) }
	scanner := func(p *Parser) error { return p.Parse(body, "text/plain", visit) }
	b.Run("textparse/all", func(b *testing.B) { run(b, nil, textparse) })
	b.Run("textparse/engine", func(b *testing.B) { run(b, engineOnly, textparse) })
	b.Run("scanner/all", func(b *testing.B) { run(b, nil, scanner) })
	b.Run("scanner/engine", func(b *testing.B) { run(b, engineOnly, scanner) })
}
