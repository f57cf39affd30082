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

// diagnoseConfig is the verdict's window: at least diagnose's default and
// never shorter than the rate window W; its groups are the pools, each
// with its own B_request (docs/pools.md).
func (s *Server) diagnoseConfig(cfg ledger.Config) diagnose.Config {
	d := s.Diagnose
	if d.Window <= 0 {
		d.Window = diagnose.DefaultWindow
	}
	if d.Window < cfg.Window {
		d.Window = cfg.Window
	}
	if d.BytesPerRequest <= 0 {
		d.BytesPerRequest = float64(cfg.KVRequest.Bytes)
	}
	if d.GroupOf == nil || d.BytesOf == nil {
		pl := newPooling(s.Ledger.Meta(), cfg, d.BytesPerRequest)
		if d.GroupOf == nil {
			d.GroupOf = pl.of
		}
		if d.BytesOf == nil {
			d.BytesOf = pl.bytesOf
		}
		if d.KVPerTransfer == nil && len(cfg.PoolRequests) > 0 {
			d.KVPerTransfer = pl.kvPerTransfer(s.Ledger)
		}
	}
	return d
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
	pts := s.Ledger.Since(t.Add(-history(dc, cfg)))
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

// history is how far back the verdict reads: two windows, so that a
// verdict can be held across a restart inside the newest one.
func history(dc diagnose.Config, cfg ledger.Config) time.Duration {
	return 2*dc.Window + cfg.Interval
}
