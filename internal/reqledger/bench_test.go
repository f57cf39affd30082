package reqledger_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/ptdmon/ptdmon/internal/reqledger"
	"github.com/ptdmon/ptdmon/internal/reqledger/reqledgertest"
)

const benchRecords = 100_000

var benchData = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	for _, x := range reqledgertest.Timelines(benchRecords, 1, base) {
		buf.WriteString(x.DisaggC(offs, true))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
})

func benchClocks(b *testing.B) *reqledger.ClockSync {
	cs, err := reqledger.ParseClockSync(probes())
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func readAll(b *testing.B, data []byte) reqledger.FileResult {
	fr, err := reqledger.ReadJSONL(bytes.NewReader(data), "bench")
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
		rep := reqledger.Build([]reqledger.FileResult{readAll(b, data)}, cs, nil, reqledger.Options{Top: 10})
		if rep.Dist[reqledger.E2E].Count != benchRecords {
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
	files := []reqledger.FileResult{readAll(b, data)}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		reqledger.Build(files, cs, nil, reqledger.Options{Top: 10})
	}
	perRecord(b)
}
