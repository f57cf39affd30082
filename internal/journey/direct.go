package journey

// AddRecords files records that arrive already joined, such as
// TensorRT-LLM's per-request perf-metrics records, whose disaggregated
// server writes one record per request with both phases. Each counts as
// spans spans against the book's bound (its legs, at least 1). The
// records are kept as given; Waterfall and Absent must not be changed
// afterwards.
func (l *Book) AddRecords(recs []Record, spans int) {
	spans = max(spans, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range recs {
		e := l.newEntry()
		e.record, e.direct, e.spans = recs[i], true, spans
		l.spans += spans
		l.stats.Records++
	}
	l.evict()
}
