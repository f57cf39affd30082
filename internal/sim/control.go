package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// IntervalTruth is the answer to /truth?from=&to=: exact counts at both ends
// and the true rates between them.
type IntervalTruth struct {
	From    Truth        `json:"from"`
	To      Truth        `json:"to"`
	Seconds float64      `json:"seconds"`
	Rates   IntervalRate `json:"rates"`
	// Busy is every instance's true busy fraction over the interval.
	Busy []InstanceBusy `json:"busy"`
}

// InstanceBusy is an instance's busy fraction over an interval: its
// engines' busy seconds ÷ (seconds × engines); the rest is idle.
type InstanceBusy struct {
	Name     string  `json:"name"`
	Role     string  `json:"role"`
	Fraction float64 `json:"fraction"`
}

// IntervalRate are the true stage rates over an interval; KV requests/s is
// KV bytes/s divided by B_request, exactly what ptdmon computes.
type IntervalRate struct {
	PrefillPerSec    float64 `json:"prefill_per_sec"`
	KVBytesPerSec    float64 `json:"kv_bytes_per_sec"`
	KVRequestsPerSec float64 `json:"kv_requests_per_sec"`
	KVTransfersPerS  float64 `json:"kv_transfers_per_sec"`
	DecodePerSec     float64 `json:"decode_per_sec"`
}

// Interval returns the truth over [from, to].
func (c *Cluster) Interval(from, to time.Time) IntervalTruth {
	a, b := c.TruthAt(from), c.TruthAt(to)
	it := IntervalTruth{From: a, To: b, Seconds: b.At.Sub(a.At).Seconds()}
	if it.Seconds > 0 {
		d := b.Totals.sub(a.Totals)
		s := it.Seconds
		it.Rates = IntervalRate{
			PrefillPerSec:    float64(d.PrefillCompleted) / s,
			KVBytesPerSec:    float64(d.KVBytes) / s,
			KVRequestsPerSec: float64(d.KVBytes) / s / float64(b.BytesPerRequest),
			KVTransfersPerS:  float64(d.KVTransfers) / s,
			DecodePerSec:     float64(d.DecodeCompleted) / s,
		}
		for _, in := range b.Instances {
			busy := in.BusySeconds - a.Instance(in.Name).BusySeconds
			it.Busy = append(it.Busy, InstanceBusy{in.Name, in.Role, busy / (s * float64(max(in.Engines, 1)))})
		}
	}
	return it
}

func parseUnixNano(s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("want unix nanoseconds: %w", err)
	}
	return time.Unix(0, n), nil
}

// controlHandler serves:
//
//	/truth                   truth now
//	/truth?at=<unix-nano>    truth at an instant
//	/truth?from=<ns>&to=<ns> both ends plus true rates
//	/targets                 the scrape targets
//	/scenario                the scenario being run
//	/healthz
func (c *Cluster) controlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /truth", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Has("from") || q.Has("to") {
			from, err1 := parseUnixNano(q.Get("from"))
			to, err2 := parseUnixNano(q.Get("to"))
			if err1 != nil || err2 != nil || to.Before(from) {
				http.Error(w, "from and to must be unix nanoseconds with from <= to", http.StatusBadRequest)
				return
			}
			writeJSON(w, c.Interval(from, to))
			return
		}
		at := c.opts.Clock()
		if q.Has("at") {
			t, err := parseUnixNano(q.Get("at"))
			if err != nil {
				http.Error(w, "at: "+err.Error(), http.StatusBadRequest)
				return
			}
			at = t
		}
		writeJSON(w, c.TruthAt(at))
	})
	mux.HandleFunc("GET /targets", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.Targets()) })
	mux.HandleFunc("GET /scenario", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.model.sc) })
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
