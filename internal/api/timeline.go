package api

import (
	"maps"
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// VerdictSpan is a run of consecutive points with the same verdict: the
// verdict timeline of /api/v1/series, drawn as a band under the stage chart
// and in `ptdmon top`.
type VerdictSpan struct {
	From     time.Time      `json:"from"` // first point of the run
	To       time.Time      `json:"to"`   // last point of the run
	Class    diagnose.Class `json:"stage"`
	Headline string         `json:"headline"`
	// Groups is each group's class where groups disagree, e.g.
	// {"vllm": "prefill", "sglang": "kv"}.
	Groups map[string]diagnose.Class `json:"groups,omitempty"`
}

// pastVerdict is what the timeline keeps of one point's verdict.
type pastVerdict struct {
	class    diagnose.Class
	headline string
	groups   map[string]diagnose.Class
}

// timelineCache remembers the verdict of every point it has seen, so a
// point's verdict is computed once however many clients ask; entries older
// than the ledger's history are dropped.
type timelineCache struct {
	mu sync.Mutex
	at map[int64]pastVerdict
}

func (c *timelineCache) get(t time.Time) (pastVerdict, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pv, ok := c.at[t.UnixNano()]
	return pv, ok
}

func (c *timelineCache) put(t time.Time, v *diagnose.Verdict) {
	pv := pastVerdict{class: v.Class, headline: v.Headline}
	if v.Class == diagnose.Mixed {
		pv.groups = make(map[string]diagnose.Class, len(v.Groups))
		for _, g := range v.Groups {
			pv.groups[g.Group] = g.Class
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = make(map[int64]pastVerdict)
	}
	c.at[t.UnixNano()] = pv
}

// prune forgets verdicts of points before oldest.
func (c *timelineCache) prune(oldest time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cut := oldest.UnixNano()
	for k := range c.at {
		if k < cut {
			delete(c.at, k)
		}
	}
}

// timelineChunk is how many of the ledger's points timeline reads at a time.
var timelineChunk = 300

// timeline returns the verdict spans over pts (oldest first), computing the
// verdict of each point not seen before from the ledger's points in the
// window before it.
func (s *Server) timeline(pts []ledger.Point) []VerdictSpan {
	if len(pts) == 0 {
		return nil
	}
	cfg := s.Ledger.Config()
	dc := s.diagnoseConfig(cfg)
	c := &s.past
	// The ledger's points from the first miss on, read timelineChunk at a
	// time and let go once behind the verdict's window: cold points are
	// rebuilt on read, and the whole hour at once would be hundreds of MB.
	var hist []ledger.Point
	pending, from, started := true, pts[0].Time.Add(-dc.Lookback(cfg.Interval)), false
	lo := 0
	var out []VerdictSpan
	for i := range pts {
		t := pts[i].Time
		pv, ok := c.get(t)
		if !ok {
			for pending && (len(hist) == 0 || !hist[len(hist)-1].Time.After(t)) {
				var chunk []ledger.Point
				chunk, pending = s.Ledger.Range(from, timelineChunk)
				if len(chunk) > 0 {
					if !started {
						c.prune(chunk[0].Time)
					}
					from = chunk[len(chunk)-1].Time
				}
				started = true
				if lo > 0 { // forget the points behind the window
					n := copy(hist, hist[lo:])
					clear(hist[n:])
					hist, lo = hist[:n], 0
				}
				hist = append(hist, chunk...)
			}
			hi := lo
			for hi < len(hist) && !hist[hi].Time.After(t) {
				hi++
			}
			for lo < hi && t.Sub(hist[lo].Time) > dc.Lookback(cfg.Interval) {
				lo++
			}
			v := diagnose.Diagnose(hist[lo:hi], dc)
			c.put(t, &v)
			pv, _ = c.get(t)
		}
		if n := len(out); n > 0 && out[n-1].Class == pv.class && maps.Equal(out[n-1].Groups, pv.groups) {
			out[n-1].To = t
			continue
		}
		out = append(out, VerdictSpan{From: t, To: t, Class: pv.class, Headline: pv.headline, Groups: pv.groups})
	}
	return out
}
