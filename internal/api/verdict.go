package api

import (
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// verdictCache computes the verdict once per tick, shared by every stream
// client, the snapshot and /metrics.
type verdictCache struct {
	mu sync.Mutex
	at time.Time
	v  diagnose.Verdict
}

// diagnoseConfig is the verdict's configuration as every reader of it
// takes it (diagnose.Config.ForRates): the configured one, its window never
// shorter than the rate window W.
func (s *Server) diagnoseConfig(cfg ledger.Config) diagnose.Config {
	return s.Diagnose.ForRates(cfg.Window)
}

// verdictAt returns the verdict at the point stamped t (the newest point
// when t is zero), or nil when there are no points.
func (s *Server) verdictAt(t time.Time) *diagnose.Verdict {
	if t.IsZero() {
		p, ok := s.Ledger.Latest()
		if !ok {
			return nil
		}
		t = p.Time
	}
	c := &s.verdicts
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.Equal(t) {
		v := c.v
		return &v
	}
	cfg := s.Ledger.Config()
	dc := s.diagnoseConfig(cfg)
	pts := s.Ledger.Since(t.Add(-dc.Lookback(cfg.Interval)))
	for len(pts) > 0 && pts[len(pts)-1].Time.After(t) {
		pts = pts[:len(pts)-1]
	}
	v := diagnose.Diagnose(pts, dc)
	c.at, c.v = t, v
	s.past.put(t, &v)
	return &v
}

// stage is the verdict's class now, for the ptd_bottleneck_stage metric.
func (s *Server) stage() string {
	if v := s.verdictAt(time.Time{}); v != nil {
		return string(v.Class)
	}
	return string(diagnose.Insufficient)
}

// briefGroups copies the group verdicts without their evidence and notes:
// the deployment's evidence already carries each group's first line, and
// a stream event stays small. The snapshot and series keep them whole.
func briefGroups(gs []diagnose.GroupVerdict) []diagnose.GroupVerdict {
	if len(gs) == 0 {
		return nil
	}
	out := make([]diagnose.GroupVerdict, len(gs))
	for i, g := range gs {
		g.Evidence, g.Notes, g.Traffic = nil, nil, nil
		out[i] = g
	}
	return out
}
