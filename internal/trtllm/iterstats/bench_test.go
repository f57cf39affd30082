package iterstats

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// benchBody is one 1 s poll: 50 frames × 8 attention-DP ranks, each row
// shaped like docs/trtllm.md#example-record, rank-0 rows with 8 requestStats entries.
func benchBody(b *testing.B) []byte {
	var recs []map[string]any
	t := time.Date(2026, 11, 29, 10, 41, 7, 0, time.UTC)
	for f := 0; f < 50; f++ {
		for rank := 0; rank < 8; rank++ {
			x := map[string]any{
				"timestamp": hostStamp(t.Add(time.Duration(f) * 20 * time.Millisecond)), "iter": 48812 + f,
				"iterLatencyMS": 21.73, "newActiveRequestsQueueLatencyMS": 0.41, "numNewActiveRequests": 2,
				"numActiveRequests": 37, "numQueuedRequests": 3, "numCompletedRequests": 1, "maxNumActiveRequests": 256,
				"maxBatchSizeStatic": 0, "maxBatchSizeTunerRecommended": 0, "maxBatchSizeRuntime": 0,
				"maxNumTokensStatic": 0, "maxNumTokensTunerRecommended": 0, "maxNumTokensRuntime": 0,
				"gpuMemUsage": 128849018880, "cpuMemUsage": 0, "pinnedMemUsage": 0,
				"kvCacheStats": map[string]any{"maxNumBlocks": 101256, "freeNumBlocks": 88710, "usedNumBlocks": 12546,
					"tokensPerBlock": 32, "allocTotalBlocks": 4380113 + f, "allocNewBlocks": 3902877, "reusedBlocks": 477236 + f,
					"missedBlocks": 3898120, "cacheHitRate": 0.10905},
				"staticBatchingStats": map[string]any{"numScheduledRequests": 0, "numContextRequests": 0, "numCtxTokens": 0,
					"numGenTokens": 0, "emptyGenSlots": 0},
				"inflightBatchingStats": map[string]any{"numScheduledRequests": 36, "numContextRequests": 1, "numGenRequests": 35,
					"numPausedRequests": 0, "numCtxTokens": 2048, "microBatchId": 0, "avgNumDecodedTokensPerIter": 1.0,
					"numCtxKvTokens": 4096, "numGenKvTokens": 118734, "numQueuedContextRequests": 3,
					"numQueuedCtxTokens": 9216, "numQueuedGenRequests": 0, "numQueuedGenKvTokens": 0, "numPausedKvTokens": 0},
				"specDecodingStats": nil, "schedulerMode": "overlap", "statsSequence": 9021 + f, "statsDroppedFrames": 0,
				"hostStepTimeMS": 10.92, "prevDeviceStepTimeMS": 9.87, "gpuForwardTimeMS": 9.61, "rank": rank,
				"attentionDpRank": rank,
			}
			if rank == 0 {
				var rs []map[string]any
				for q := 0; q < 8; q++ {
					rs = append(rs, map[string]any{"id": uint64(1<<60) + uint64(f*8+q), "stage": "GENERATION_IN_PROGRESS",
						"contextPrefillPosition": 8192, "numGeneratedTokens": 12, "avgNumDecodedTokensPerIter": 1.0,
						"scheduled": true, "paused": false,
						"disServingStats":            map[string]any{"kvCacheTransferMS": 3.2, "kvCacheSize": 1 << 30},
						"allocTotalBlocksPerRequest": 256, "allocNewBlocksPerRequest": 256, "reusedBlocksPerRequest": 0,
						"missedBlocksPerRequest": 256, "kvCacheHitRatePerRequest": 0.0})
				}
				x["requestStats"] = rs
			}
			recs = append(recs, x)
		}
	}
	out, err := json.Marshal(recs)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func BenchmarkRead50x8(b *testing.B) {
	body := benchBody(b)
	r := NewReader(engine.Decode, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	now := time.Now()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, _, err := r.Read(body, now.Add(time.Duration(i)*time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}
