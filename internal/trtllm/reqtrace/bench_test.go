package reqtrace_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

const benchRecords = 100_000

var benchData = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	for _, x := range reqtracetest.Timelines(benchRecords, 1, base) {
		buf.WriteString(x.DisaggC(offs, true))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
})

func benchClocks(b *testing.B) *reqtrace.ClockSync {
	cs, err := reqtrace.ParseClockSync(probes())
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func readAll(b *testing.B, data []byte) reqtrace.FileResult {
	fr, err := reqtrace.ReadJSONL(bytes.NewReader(data), "bench")
	if err != nil || len(fr.Records) != benchRecords {
		b.Fatal(err, len(fr.Records))
	}
	return fr
}

func perRecord(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRecords, "ns/record")
}

// BenchmarkReadBuild parses 100k generation-C lines and builds the whole
// report (alignment, chain, spans, distributions, shares, slowest).
func BenchmarkReadBuild(b *testing.B) {
	data, cs := benchData(), benchClocks(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rep := reqtrace.Build([]reqtrace.FileResult{readAll(b, data)}, cs, nil, reqtrace.Options{Top: 10})
		if rep.Dist[reqtrace.E2E].Count != benchRecords {
			b.Fatal("lost requests")
		}
	}
	perRecord(b)
}

// BenchmarkRead is the parsing half alone.
func BenchmarkRead(b *testing.B) {
	data := benchData()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		readAll(b, data)
	}
	perRecord(b)
}

// BenchmarkBuild is the computing half alone.
func BenchmarkBuild(b *testing.B) {
	data, cs := benchData(), benchClocks(b)
	files := []reqtrace.FileResult{readAll(b, data)}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		reqtrace.Build(files, cs, nil, reqtrace.Options{Top: 10})
	}
	perRecord(b)
}
