package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Process is one span of the recording process: a run killed and resumed
// has two. ConfigHash is the hash of the settings it ran with.
type Process struct {
	Start      time.Time `json:"start"`
	Stop       time.Time `json:"stop,omitzero"`
	ConfigHash string    `json:"config_hash,omitempty"`
}

// TargetSet is the targets in force from From on.
type TargetSet struct {
	From    time.Time `json:"from"`
	Targets []string  `json:"targets"`
}

// Event is something that happened in the run which its rates alone do not
// say: a gap with no point, a restart of ptdmon, a target down, a change
// of configuration or of the target set, a part of the source lost.
type Event struct {
	Kind    string    `json:"kind"` // gap, restart, down, configuration, targets, lost
	From    time.Time `json:"from"`
	To      time.Time `json:"to,omitzero"`
	Seconds float64   `json:"seconds,omitempty"`
	Text    string    `json:"text"`
}

// Event kinds.
const (
	EventGap     = "gap"
	EventRestart = "restart"
	EventDown    = "down"
	EventConfig  = "configuration"
	EventTargets = "targets"
	EventLost    = "lost"
)

// maxDownEvents bounds the targets-down events a report lists; the rest
// are counted in one more.
const maxDownEvents = 50

// isGap says whether two consecutive points are further apart than the
// ledger ticks: more than two intervals, so a late tick is no gap.
func isGap(a, b time.Time, interval time.Duration) bool { return b.Sub(a) > 2*interval }

// events lists what happened in pts (oldest first, the reported range),
// in time order.
func events(m Meta, pts []ledger.Point, interval time.Duration) []Event {
	var out []Event
	if len(pts) == 0 {
		return out
	}
	from, to := pts[0].Time, pts[len(pts)-1].Time
	in := func(t time.Time) bool { return !t.Before(from) && !t.After(to) }
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1].Time, pts[i].Time
		if !isGap(a, b, interval) {
			continue
		}
		out = append(out, Event{Kind: EventGap, From: a, To: b, Seconds: ms(b.Sub(a).Seconds()),
			Text: fmt.Sprintf("no point for %s: %s", b.Sub(a).Round(time.Second), gapWhy(m, a, b))})
	}
	for i := 1; i < len(m.Processes); i++ {
		p, prev := m.Processes[i], m.Processes[i-1]
		if !in(p.Start) {
			continue
		}
		how := "was killed (no stop recorded)"
		if !prev.Stop.IsZero() {
			how = "stopped at " + stamp(prev.Stop)
		}
		out = append(out, Event{Kind: EventRestart, From: p.Start, Text: "ptdmon restarted; the process before it " + how})
		if p.ConfigHash != "" && prev.ConfigHash != "" && p.ConfigHash != prev.ConfigHash {
			out = append(out, Event{Kind: EventConfig, From: p.Start,
				Text: fmt.Sprintf("configuration changed: settings hash %s → %s", short(prev.ConfigHash), short(p.ConfigHash))})
		}
	}
	for i := 1; i < len(m.TargetSets); i++ {
		s := m.TargetSets[i]
		if !in(s.From) {
			continue
		}
		added, removed := setDiff(m.TargetSets[i-1].Targets, s.Targets)
		if len(added)+len(removed) == 0 {
			continue
		}
		var parts []string
		if len(added) > 0 {
			parts = append(parts, "added "+strings.Join(added, ", "))
		}
		if len(removed) > 0 {
			parts = append(parts, "removed "+strings.Join(removed, ", "))
		}
		out = append(out, Event{Kind: EventTargets, From: s.From, Text: "targets changed: " + strings.Join(parts, "; ")})
	}
	out = append(out, downEvents(pts)...)
	for _, l := range m.Lost {
		e := Event{Kind: EventLost, From: l.From, To: l.To, Text: "lost " + l.File + ": " + l.Reason}
		if e.From.IsZero() {
			e.From = from
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.From.Compare(b.From) })
	return out
}

// gapWhy says what a gap between a and b was, as far as the run knows.
func gapWhy(m Meta, a, b time.Time) string {
	for i, p := range m.Processes {
		if i > 0 && p.Start.After(a) && !p.Start.After(b) {
			if prev := m.Processes[i-1]; prev.Stop.IsZero() {
				return "ptdmon was not running (killed, restarted at " + stamp(p.Start) + ")"
			}
			return "ptdmon was not running (stopped, restarted at " + stamp(p.Start) + ")"
		}
	}
	for _, l := range m.Lost {
		if !l.From.IsZero() && l.From.Before(b) && l.To.After(a) {
			return "lost with " + l.File
		}
	}
	return "no tick recorded (ptdmon stalled or its clock jumped)"
}

// downEvents are the spans in which a target that had been read was down
// (a failed or stale scrape), from the points' instance detail, and the
// targets never up in the range; a point without detail (the oldest of a
// long recording) tells nothing either way.
func downEvents(pts []ledger.Point) []Event {
	var out []Event
	type state struct {
		seenUp   bool
		down     bool
		from, to time.Time
	}
	st := map[string]*state{}
	var order []string
	n := 0
	emit := func(t string, s *state) {
		n++
		if n <= maxDownEvents {
			out = append(out, Event{Kind: EventDown, From: s.from, To: s.to, Seconds: ms(s.to.Sub(s.from).Seconds()),
				Text: fmt.Sprintf("target %s down from %s to %s", t, stamp(s.from), stamp(s.to))})
		}
		s.down = false
	}
	for i := range pts {
		for _, ip := range pts[i].Instances {
			s := st[ip.Target]
			if s == nil {
				s = &state{}
				st[ip.Target] = s
				order = append(order, ip.Target)
			}
			switch {
			case ip.Up && s.down:
				emit(ip.Target, s)
				s.seenUp = true
			case ip.Up:
				s.seenUp = true
			case s.seenUp && !s.down:
				s.down, s.from, s.to = true, pts[i].Time, pts[i].Time
			case s.down:
				s.to = pts[i].Time
			}
		}
	}
	for _, t := range order {
		s := st[t]
		if s.down {
			emit(t, s)
		}
		if !s.seenUp {
			n++
			if n <= maxDownEvents {
				out = append(out, Event{Kind: EventDown, From: pts[0].Time, To: pts[len(pts)-1].Time,
					Seconds: ms(pts[len(pts)-1].Time.Sub(pts[0].Time).Seconds()), Text: "target " + t + " never up in the range"})
			}
		}
	}
	if n > maxDownEvents {
		out = append(out, Event{Kind: EventDown, From: pts[len(pts)-1].Time,
			Text: fmt.Sprintf("%d more spans of a target down are not listed", n-maxDownEvents)})
	}
	return out
}

func setDiff(a, b []string) (added, removed []string) {
	for _, x := range b {
		if !slices.Contains(a, x) {
			added = append(added, x)
		}
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			removed = append(removed, x)
		}
	}
	return added, removed
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
