package ledger_test

import (
	"testing"
	"time"
)

// BenchmarkCheckpoint is one second of a 200-instance fleet whose ledger
// hands its sealed points out as checkpoints, taken after every tick as a
// recording does: against BenchmarkHistoryAppend/200, the checkpoint's
// cost. "ckpt-B/tick" is what the checkpoint writes per second,
// "ckpt-ns/tick" the time Checkpoint takes per second (the encoding of a
// segment every 64 ticks; the step's cost with it is the sealing's, which
// happens with or without a checkpoint).
func BenchmarkCheckpoint(b *testing.B) {
	f := newFleet(200)
	f.fill(3700)
	f.l.KeepCheckpoints()
	bytes := 0
	var spent time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.step()
		start := time.Now()
		pieces, err := f.l.Checkpoint()
		spent += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range pieces {
			bytes += len(p)
		}
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "ckpt-B/tick")
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ckpt-ns/tick")
}

// BenchmarkRestore restores the hour of 200 instances a checkpoint holds
// into a ledger configured as serve's: resume's part that replaces
// recomputing the hour from the recorded inputs.
func BenchmarkRestore(b *testing.B) {
	f := newFleet(200)
	f.l.KeepCheckpoints()
	var pieces [][]byte
	for i := 0; i < 3700; i++ {
		f.step()
		ps, err := f.l.Checkpoint()
		if err != nil {
			b.Fatal(err)
		}
		pieces = append(pieces, ps...)
	}
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	b.ReportAllocs()
	b.ResetTimer()
	points := 0
	for i := 0; i < b.N; i++ {
		l := newFleet(200).l
		n, _, err := l.Restore(pieces, time.Time{})
		if err != nil {
			b.Fatal(err)
		}
		points = n
	}
	b.ReportMetric(float64(points), "points")
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}
