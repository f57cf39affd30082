package diagnose

import (
	"fmt"
	"math"
	"slices"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Outlier thresholds (docs/web.md#instances-at-fleet-size): an instance is
// queued when its waiting requests exceed max(QueuedFactor×median,
// median+QueuedMargin) of its peers, and slow when its windowed req/s is
// below SlowFraction of its peers' median while it has work.
// Stalled and slow also need the instance's completions over its window
// to be less likely than Significance at its peers' median rate.
const (
	QueuedFactor = 2.0
	QueuedMargin = 3.0
	SlowFraction = 0.5
	Significance = 1e-4
)

// Statuses of an instance, worst first.
const (
	StatusDown    = "down"
	StatusStalled = "stalled"
	StatusQueued  = "queued"
	StatusSlow    = "slow"
	StatusOK      = "ok"
)

// StatusOrder lists the statuses worst first: a Standing's Rank is its
// status' index.
var StatusOrder = [...]string{StatusDown, StatusStalled, StatusQueued, StatusSlow, StatusOK}

const (
	rankDown = iota
	rankStalled
	rankQueued
	rankSlow
	rankOK
)

// Standing is one instance's classification against its peers.
type Standing struct {
	Group    string   // the instance's verdict group
	Status   string   // one of StatusOrder
	Rank     int      // Status' index in StatusOrder: smaller is worse
	Flags    []string // every rule the instance breaks, with its numbers
	Severity float64  // orders instances within their status, larger first
}

// peerKey is the set an instance is compared with: the same verdict group
// and role.
type peerKey struct{ group, role string }

type peerStats struct {
	waiting, window []float64
	total           float64 // the windowed req/s of them all
	medWaiting      ledger.Num
	medWindow       ledger.Num
}

// ClassifyInstances classifies each of ins against its peers (the up
// instances of the same verdict group and role): down, stalled, queued,
// slow or ok; the group is the instance's pool. lastError
// gives a target's last scrape error for a down instance's flag ("" when
// unknown); window is W in seconds. It reads ins only and runs in
// O(n log n).
func ClassifyInstances(ins []ledger.InstancePoint, window float64, lastError func(target string) string) []Standing {
	out := make([]Standing, len(ins))
	peers := map[peerKey]*peerStats{}
	for i := range ins {
		ip := &ins[i]
		out[i].Group = groupOf(ip)
		// Down or asleep: not a peer whose rate and queue set the norm.
		if !ip.Up || ip.Sleep != "" {
			continue
		}
		k := peerKey{out[i].Group, ip.Role}
		ps := peers[k]
		if ps == nil {
			ps = &peerStats{}
			peers[k] = ps
		}
		if ip.Waiting.OK() {
			ps.waiting = append(ps.waiting, ip.Waiting.V)
		}
		if ip.Window.OK() {
			ps.window = append(ps.window, ip.Window.V)
			ps.total += ip.Window.V
		}
	}
	for _, ps := range peers {
		ps.medWaiting, ps.medWindow = Median(ps.waiting), Median(ps.window)
	}
	for i := range ins {
		ip := &ins[i]
		lastErr := ""
		if !ip.Up && lastError != nil {
			lastErr = lastError(ip.Target)
		}
		classify(&out[i], ip, peers[peerKey{out[i].Group, ip.Role}], window, lastErr)
	}
	return out
}

// classify sets st's status, flags and severity.
func classify(st *Standing, ip *ledger.InstancePoint, ps *peerStats, window float64, lastErr string) {
	st.Rank = rankOK
	defer func() { st.Status = StatusOrder[st.Rank] }()
	flag := func(r int, f string, sev float64) {
		if r < st.Rank {
			st.Rank, st.Severity = r, sev
		}
		st.Flags = append(st.Flags, f)
	}
	if !ip.Up {
		why := "last scrape failed"
		if lastErr != "" {
			why = "last scrape failed: " + lastErr
		}
		flag(rankDown, "down: "+why, 0)
		return
	}
	// Asleep on purpose (vLLM's sleep mode): it serves nothing and is
	// neither down nor stalled; none of the rules that compare a serving
	// instance with its peers applies.
	if ip.Sleep != "" {
		flag(rankOK, "asleep: "+SleepText(ip.Sleep), 0)
		return
	}
	work := orZero(ip.Running) + orZero(ip.Waiting)
	// A rate over less than half of W (a target just added or back from
	// a restart) is too short to call a silence a stall, or slow.
	span := ip.WindowTo.Sub(ip.WindowFrom).Seconds()
	if span < window/2 || !ip.Window.OK() || ps == nil {
		work = 0 // neither stalled nor slow
	}
	// Completions are counts: over a few seconds, an instance serving a
	// fraction of a request per second completes none or one by chance.
	// Stalled and slow are flagged only when so few completions would be
	// that rare at the peers' median rate (a Poisson count, which varies
	// more than a batch that completes steadily does).
	var expect float64
	if ps != nil && ps.medWindow.OK() {
		expect = ps.medWindow.V * span
	}
	done := math.Round(orZero(ip.Window) * span)
	switch {
	case work == 0:
	case ip.Window.V == 0 && ps.total == 0:
		flag(rankStalled, fmt.Sprintf("stalled: 0 completions in %.3g s on every %s %s instance", span, st.Group, ip.Role), work)
	case ip.Window.V == 0 && poissonAtMost(0, expect) < Significance:
		flag(rankStalled, fmt.Sprintf("stalled: 0 completions in %.3g s, peers' median %.3g", span, expect), work)
	case ip.Window.V < SlowFraction*ps.medWindow.V && poissonAtMost(done, expect) < Significance:
		flag(rankSlow, fmt.Sprintf("slow: %.3g req/s over %.3g s, peers' median %.3g", ip.Window.V, span, ps.medWindow.V),
			1-ip.Window.V/ps.medWindow.V)
	}
	if ps == nil {
		return
	}
	if m := ps.medWaiting; ip.Waiting.OK() && m.OK() {
		if lim := max(QueuedFactor*m.V, m.V+QueuedMargin); ip.Waiting.V > lim {
			flag(rankQueued, fmt.Sprintf("queued: %g waiting, over %g (peers' median %g)", ip.Waiting.V, lim, m.V), ip.Waiting.V)
		}
	}
}

// SleepText says what an instance's sleep state (InstancePoint.Sleep)
// means.
func SleepText(state string) string {
	switch state {
	case ledger.SleepWeightsOffloaded:
		return "sleep mode, level 1 (weights offloaded, KV cache discarded): serves nothing until woken"
	case ledger.SleepDiscardAll:
		return "sleep mode, level 2 (weights and KV cache discarded): serves nothing until woken"
	}
	return "sleep mode, no engine awake: serves nothing until woken"
}

// poissonAtMost is P(X ≤ c) for X ~ Poisson(lambda).
func poissonAtMost(c, lambda float64) float64 {
	switch {
	case lambda <= 0:
		return 1
	case lambda >= 200 && c < lambda/2:
		return 0 // below 1e-14: no need to add the terms
	}
	sum := 0.0
	for k := 0.0; k <= c; k++ {
		lg, _ := math.Lgamma(k + 1)
		sum += math.Exp(-lambda + k*math.Log(lambda) - lg)
	}
	return min(sum, 1)
}

// orZero is n's value, 0 when absent: an absent queue holds no work.
func orZero(n ledger.Num) float64 {
	if n.OK() {
		return n.V
	}
	return 0
}

// Median of vs (reordered), absent when vs is empty.
func Median(vs []float64) ledger.Num {
	if len(vs) == 0 {
		return ledger.Absent("no peer has the value")
	}
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return ledger.Val(vs[n/2])
	}
	return ledger.Val((vs[n/2-1] + vs[n/2]) / 2)
}
