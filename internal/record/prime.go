//go:build !norecord

package record

import (
	"context"
	"fmt"
	"slices"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// lastReads returns, oldest first, the last successful read in [lo, mint)
// of each target that has none in [mint, maxt]: an engine down since
// before the span a feed starts at. The live ledger still held that read —
// its counters' totals in the global KV counter, its place in the stages
// it was read in — so a feed cut at mint sends it first.
func lastReads(q storage.Queryable, lo, mint, maxt int64, texts *errorTexts, look int64) ([]replayEvent, error) {
	before, err := readTimes(q, lo, mint-1)
	if err != nil {
		return nil, err
	}
	after, err := readTimes(q, mint, maxt)
	if err != nil {
		return nil, err
	}
	type need struct {
		target string
		t      int64
	}
	var needs []need
	for target, t := range before {
		if _, ok := after[target]; !ok {
			needs = append(needs, need{target, t})
		}
	}
	slices.SortFunc(needs, func(a, b need) int { return int(a.t - b.t) })
	var out []replayEvent
	// Engines that went down together are read in one slice.
	for i := 0; i < len(needs); {
		j := i + 1
		for j < len(needs) && needs[j].t-needs[i].t < sliceSpan.Milliseconds() {
			j++
		}
		want := make(map[string]int64, j-i)
		for _, n := range needs[i:j] {
			want[n.target] = n.t
		}
		evs, err := readSlice(q, needs[i].t, needs[j-1].t, texts, look)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if t, ok := want[e.scrape.Target]; ok && !e.tick && e.scrape.Obs != nil && e.at.UnixMilli() == t {
				out = append(out, e)
			}
		}
		i = j
	}
	slices.SortStableFunc(out, cmpEvents)
	return out, nil
}

// readTimes returns each target's last successful read in [lo, hi], in ms.
func readTimes(q storage.Queryable, lo, hi int64) (map[string]int64, error) {
	out := map[string]int64{}
	if lo > hi {
		return out, nil
	}
	qr, err := q.Querier(lo, hi)
	if err != nil {
		return nil, fmt.Errorf("query recording: %w", err)
	}
	defer qr.Close()
	ss := qr.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, nameScrape))
	var it chunkenc.Iterator
	for ss.Next() {
		target := ss.At().Labels().Get(labelTarget)
		it = ss.At().Iterator(it)
		for it.Next() == chunkenc.ValFloat {
			if t, _ := it.At(); t >= lo && t <= hi {
				if prev, ok := out[target]; !ok || t > prev {
					out[target] = t
				}
			}
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("read recording: %w", err)
		}
	}
	if err := ss.Err(); err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	return out, nil
}
