package diagnose

import (
	"slices"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Stream is Diagnose for a caller that asks for the verdict at every tick
// (the recorder): it takes the points one at a time, keeps those within
// keep of the newest, and gives the verdict Diagnose gives over them.
// Diagnose rebuilds every group's stage sums at every point of its window
// on each call, although from one tick to the next only the newest point
// is new; a Stream keeps each point's groups and group sums, and rebuilds
// a point's sums only when what they rest on changed: the group's KV
// exporters over the window, which an instance joins when its KV rate is
// present at any point of it (GroupPoints).
type Stream struct {
	cfg   Config // with its defaults
	keep  time.Duration
	pts   []ledger.Point
	memos []*pointMemo // memos[i] is what pts[i] holds
	first int          // the verdict's window is pts[first:]
	// exporters are each group's KV exporters over the window, by group.
	exporters map[string]*exporters
	version   uint64 // the last exporters version given out
}

// exporters are one group's KV exporters over the window.
type exporters struct {
	points map[string]int  // target → points of the window it exports KV at
	set    map[string]bool // the targets of points, as GroupPoints' exports
	// version changes whenever set does: sums of another version were
	// computed with other exporters.
	version uint64
	// bytes is the group's B_request, why the reason when it is 0.
	bytes float64
	why   string
}

// pointMemo is what a Stream knows of one of its points.
type pointMemo struct {
	groups   []string // the group of each of the point's instances
	names    []string // the groups of its instances other than routers
	downs    []down   // its instances that are not up
	sums     []groupSums
	inWindow bool // counted in the Stream's exporters
}

// down is an instance that is not up at a point; upToo says another
// entry of the same target is up at that point.
type down struct {
	group, target string
	upToo         bool
}

// groupSums are a group's stage sums at one point (groupPoint), computed
// with the group's exporters of version.
type groupSums struct {
	name    string
	version uint64
	point   ledger.Point
}

// NewStream returns a Stream that diagnoses with cfg and keeps the points
// within keep of the newest (for a verdict held across a restart it needs
// two windows: docs/web.md#the-verdict).
func NewStream(cfg Config, keep time.Duration) *Stream {
	s := &Stream{keep: keep}
	s.SetConfig(cfg)
	return s
}

// SetConfig makes cfg the configuration of the verdicts from now on, over
// the points already kept too (as Diagnose with cfg over them would). What
// the Stream knew of its points under the former one is dropped.
func (s *Stream) SetConfig(cfg Config) {
	s.cfg = cfg.withDefaults()
	s.exporters = map[string]*exporters{}
	for i := range s.pts {
		s.memos[i] = s.memoOf(&s.pts[i])
	}
	s.settle()
}

// Observe adds the newest point p, and drops the points that are no longer
// within keep of it.
func (s *Stream) Observe(p ledger.Point) {
	s.pts = append(s.pts, p)
	s.memos = append(s.memos, s.memoOf(&s.pts[len(s.pts)-1]))
	cut := 0
	for cut < len(s.pts) && !s.pts[cut].Time.After(p.Time.Add(-s.keep)) {
		cut++
	}
	for i := range cut {
		if s.memos[i].inWindow {
			s.leave(i)
		}
	}
	// The dropped points' copies past the end would hold their instances.
	n := copy(s.pts, s.pts[cut:])
	clear(s.pts[n:])
	s.pts = s.pts[:n]
	copy(s.memos, s.memos[cut:])
	clear(s.memos[n:])
	s.memos = s.memos[:n]
	s.settle()
}

// Verdict is Diagnose's verdict over the points kept.
func (s *Stream) Verdict() Verdict {
	if len(s.pts) == 0 {
		return Diagnose(nil, s.cfg)
	}
	return diagnoseGroups(s.pts, s.first, s.cfg, s.names(), s.groupWindow, s.mayHold)
}

// settle finds the window and counts the exporters of the points that
// entered it, and no longer those of the points that left.
func (s *Stream) settle() {
	if len(s.pts) == 0 {
		s.first = 0
		return
	}
	s.first = windowStart(s.pts, s.cfg.Window)
	for i, m := range s.memos {
		switch in := i >= s.first; {
		case in && !m.inWindow:
			s.enter(i)
		case !in && m.inWindow:
			s.leave(i)
		}
	}
}

func (s *Stream) memoOf(p *ledger.Point) *pointMemo {
	m := &pointMemo{groups: make([]string, len(p.Instances))}
	for j := range p.Instances {
		ip := &p.Instances[j]
		g := s.cfg.GroupOf(ip)
		m.groups[j] = g
		if ip.Role != string(engine.Router) && !slices.Contains(m.names, g) {
			m.names = append(m.names, g)
		}
		if !ip.Up {
			m.downs = append(m.downs, down{group: g, target: ip.Target})
		}
	}
	// A target listed twice at one point (never by the ledger) may be
	// both down and up there.
	if len(m.downs) > 0 {
		for j := range p.Instances {
			if ip := &p.Instances[j]; ip.Up {
				for k := range m.downs {
					if d := &m.downs[k]; d.target == ip.Target && d.group == m.groups[j] {
						d.upToo = true
					}
				}
			}
		}
	}
	return m
}

// enter counts the exporters of pts[i], which is in the window now.
func (s *Stream) enter(i int) {
	m := s.memos[i]
	m.inWindow = true
	for j := range s.pts[i].Instances {
		ip := &s.pts[i].Instances[j]
		if !exportsKV(ip) {
			continue
		}
		e := s.exportersOf(m.groups[j])
		e.points[ip.Target]++
		if e.points[ip.Target] == 1 {
			e.set[ip.Target] = true
			s.version++
			e.version = s.version
		}
	}
}

// leave no longer counts the exporters of pts[i], which left the window.
func (s *Stream) leave(i int) {
	m := s.memos[i]
	m.inWindow = false
	for j := range s.pts[i].Instances {
		ip := &s.pts[i].Instances[j]
		if !exportsKV(ip) {
			continue
		}
		e := s.exportersOf(m.groups[j])
		e.points[ip.Target]--
		if e.points[ip.Target] == 0 {
			delete(e.points, ip.Target)
			delete(e.set, ip.Target)
			s.version++
			e.version = s.version
		}
	}
}

func (s *Stream) exportersOf(group string) *exporters {
	e := s.exporters[group]
	if e == nil {
		s.version++
		e = &exporters{points: map[string]int{}, set: map[string]bool{}, version: s.version}
		e.bytes, e.why = s.cfg.bytesFor(group)
		s.exporters[group] = e
	}
	return e
}

// names are the groups present in the window, sorted, as groupNames
// lists them.
func (s *Stream) names() []string {
	var out []string
	for _, m := range s.memos[s.first:] {
		for _, g := range m.names {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return out
}

// groupWindow is groupPoints over the window: each point's sums are
// rebuilt only when the group's exporters changed since they were built.
func (s *Stream) groupWindow(name string) []ledger.Point {
	e := s.exportersOf(name)
	out := make([]ledger.Point, len(s.pts)-s.first)
	for i := s.first; i < len(s.pts); i++ {
		gs := s.memos[i].sumsOf(name)
		if gs.version != e.version {
			groupPoint(&gs.point, &s.pts[i], name, s.cfg.GroupOf, e.set, e.bytes, e.why)
			gs.version = e.version
		}
		out[i-s.first] = gs.point
	}
	return out
}

// sumsOf is the memo's entry for group name's sums, added (of version 0,
// which no exporters have) when the point has none yet.
func (m *pointMemo) sumsOf(name string) *groupSums {
	for k := range m.sums {
		if m.sums[k].name == name {
			return &m.sums[k]
		}
	}
	m.sums = append(m.sums, groupSums{name: name})
	return &m.sums[len(m.sums)-1]
}

// mayHold says whether an instance of group name is up at one point and
// down at a later one: holdAcrossRestart finds a restart only then, and
// reads every instance at every point to find it. An instance down at
// every point it is listed at (a target that never came up) is no
// restart.
func (s *Stream) mayHold(name string) bool {
	var always map[string]bool // down and never up at every point so far
	for i, m := range s.memos {
		var next map[string]bool
		for _, d := range m.downs {
			if d.group != name {
				continue
			}
			if i > 0 && !always[d.target] {
				return true
			}
			if !d.upToo && (i == 0 || always[d.target]) {
				if next == nil {
					next = map[string]bool{}
				}
				next[d.target] = true
			}
		}
		always = next
	}
	return false
}
