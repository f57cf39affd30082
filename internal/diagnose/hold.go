package diagnose

import (
	"fmt"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// holdAcrossRestart keeps a group's verdict steady through a restart: for
// as long as the window contains an instance of the group going down (for
// two ticks or more, after it had been up), the signals of the window mix
// the state before the restart with the emptied queues after it. If the
// points before the restart, over a full window, named a stage and the
// mixed window gives another, the one before stands, with a note (when
// it named a bottleneck: a balanced verdict is not held). pts
// must then reach a window further back than w = pts[first:].
func holdAcrossRestart(pts []ledger.Point, first int, name string, v Verdict, cfg Config) (Verdict, bool) {
	target, down, ok := restartIn(pts, first, name)
	if !ok {
		return v, false
	}
	end := first
	for end < len(pts) && pts[end].Time.Before(down) {
		end++
	}
	start := end
	for start > 0 && pts[end-1].Time.Sub(pts[start-1].Time) <= cfg.Window {
		start--
	}
	if end-start < cfg.MinSamples {
		return v, false
	}
	pre := pts[start:end]
	gw := ledger.PoolWindow(pre, name)
	pv := judge(gw, cfg, kvFacts(gw, cfg.Thresholds))
	// Only a named bottleneck is held: a restart empties the queues that
	// showed it. "Balanced" before a restart is not held against evidence
	// after it.
	if pv.Class == Insufficient || pv.Class == Balanced || pv.Class == v.Class {
		return v, false
	}
	pv.At, pv.Window, pv.Samples = v.At, v.Window, v.Samples
	pv.Notes = append(pv.Notes, fmt.Sprintf("held across the restart of %s at %s: the window still contains it, and the verdict before it (over %.0f s) stands; without the hold it would read %s",
		target, down.UTC().Format(time.TimeOnly), pre[len(pre)-1].Time.Sub(pre[0].Time).Seconds(), v.Headline))
	return pv, true
}

// restartIn finds the first instance of group name that goes down inside
// the window pts[first:] for at least two consecutive points, having been
// up before; it returns the instance and when it went down.
func restartIn(pts []ledger.Point, first int, name string) (string, time.Time, bool) {
	if !downIn(pts[first:], name) {
		return "", time.Time{}, false
	}
	// One entry per instance, updated in place: at thousands of instances
	// a map write per instance and point was most of a verdict's cost.
	type seen struct {
		wasUp  bool
		run    int // consecutive down points, after having been up
		downAt time.Time
	}
	states := map[string]*seen{}
	for i := range pts {
		for j := range pts[i].Instances {
			ip := &pts[i].Instances[j]
			if groupOf(ip) != name {
				continue
			}
			st := states[ip.Target]
			if st == nil {
				st = &seen{}
				states[ip.Target] = st
			}
			if ip.Up {
				st.wasUp, st.run = true, 0
				continue
			}
			if !st.wasUp {
				continue
			}
			if st.run == 0 {
				st.downAt = pts[i].Time
			}
			st.run++
			if st.run >= 2 && !st.downAt.Before(pts[first].Time) {
				return ip.Target, st.downAt, true
			}
		}
	}
	return "", time.Time{}, false
}

// downIn says whether an instance of group name is down at a point of w:
// without one there is no restart to find, and no instance's history is
// worth following.
func downIn(w []ledger.Point, name string) bool {
	for i := range w {
		for j := range w[i].Instances {
			if ip := &w[i].Instances[j]; !ip.Up && groupOf(ip) == name {
				return true
			}
		}
	}
	return false
}
