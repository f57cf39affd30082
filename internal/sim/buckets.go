package sim

// Bucket boundaries are copied from the engines' collectors, each in its
// engine's profile file, because `le` values are part of the wire format a
// collector sees.

// bucketTable is a histogram's bounds plus their printed `le` values,
// computed once because every scrape prints them.
type bucketTable struct {
	bounds []float64
	le     []string // len(bounds)+1, last "+Inf"
}

func newTable(bounds ...float64) *bucketTable {
	t := &bucketTable{bounds: bounds, le: make([]string, len(bounds)+1)}
	for i, b := range bounds {
		t.le[i] = pyFloat(b)
	}
	t.le[len(bounds)] = "+Inf"
	return t
}
