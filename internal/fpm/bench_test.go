package fpm

import (
	"os"
	"testing"
	"time"
)

// BenchmarkReceive is one message's cost: frames parsed, payload decoded,
// added to the feed. A vLLM decode instance publishes one per step, about
// 30 to 100 a second.
func BenchmarkReceive(b *testing.B) {
	payload, err := os.ReadFile("testdata/vllm_pass.msgpack")
	if err != nil {
		b.Fatal(err)
	}
	feed := NewFeed([]string{"tcp://h:1"}, time.Minute)
	frames := [][]byte{{}, make([]byte, 8), payload}
	now := time.Now()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		seq, m, err := parseFrames(frames)
		if err != nil {
			b.Fatal(err)
		}
		feed.Receive(0, seq+int64(i), m, now)
	}
}
