package fpm

import (
	"fmt"
	"hash/fnv"
	"math"
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// SilentAfter is how long a stream may go without a message before its
// busy time is unknown: the engines send an idle heartbeat every second.
const SilentAfter = 3 * time.Second

// Feed adds up one instance's passes from its endpoints, one per DP rank
// (vLLM binds the configured port plus the rank). It is safe for one
// subscriber goroutine per endpoint and the scrape loop at once.
type Feed struct {
	// Quarantine is how long busy time stays unknown after a message was
	// lost, a publisher restarted or a stream fell silent: a window that
	// reaches back over the loss would read low. At least the ledger's
	// window.
	Quarantine time.Duration

	mu      sync.Mutex
	streams []stream
}

// stream is one endpoint's passes since ptdmon first heard from it.
type stream struct {
	endpoint string
	series   uint64
	busy     float64 // wall_time added up, seconds
	messages int64
	heard    bool
	last     time.Time // arrival of the newest message
	seq      int64     // the newest message's sequence number
	lost     int64     // messages missing between sequence numbers
	lostAt   time.Time // the newest loss, restart or silence that ended
	why      string    // what lostAt was
	dialErr  string    // why the endpoint cannot be reached, until it can
}

// NewFeed returns a feed of the endpoints, in the configuration's order.
func NewFeed(endpoints []string, quarantine time.Duration) *Feed {
	f := &Feed{Quarantine: quarantine, streams: make([]stream, len(endpoints))}
	for i, ep := range endpoints {
		h := fnv.New64a()
		h.Write([]byte(ep))
		f.streams[i] = stream{endpoint: ep, series: h.Sum64()}
	}
	return f
}

// Receive adds message m, the seq-th of endpoint i's publisher, arrived at.
func (f *Feed) Receive(i int, seq int64, m Message, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.streams[i]
	switch {
	case !s.heard:
	case seq <= s.seq:
		// The publisher started again (its sequence starts at 0): what it
		// ran before it stopped may not have reached us.
		s.lostAt, s.why = at, "its publisher restarted"
	case seq > s.seq+1:
		s.lost += seq - s.seq - 1
		s.lostAt, s.why = at, fmt.Sprintf("%d messages lost", seq-s.seq-1)
	case at.Sub(s.last) > SilentAfter:
		s.lostAt, s.why = at, fmt.Sprintf("silent for %.0f s", at.Sub(s.last).Seconds())
	}
	s.heard, s.seq, s.last = true, seq, at
	s.busy += m.WallTime
	s.messages++
	s.dialErr = ""
}

// Unreachable records why endpoint i cannot be reached now.
func (f *Feed) Unreachable(i int, err error) {
	f.mu.Lock()
	f.streams[i].dialErr = err.Error()
	f.mu.Unlock()
}

// AddTo adds the instance's forward-pass seconds to o, one counter per
// endpoint, as of now. When any endpoint's busy time is unknown the
// counters are NaN (absent downstream, so the ledger falls back to the
// engine's other busy signals) and a note says why.
func (f *Feed) AddTo(o *engine.Observation, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	why := ""
	for i := range f.streams {
		if why = f.streams[i].unknown(now, f.Quarantine); why != "" {
			break
		}
	}
	for i := range f.streams {
		s := &f.streams[i]
		v := s.busy
		if why != "" {
			v = math.NaN()
		}
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.ForwardPassSeconds, Series: s.series, Value: v})
	}
	if why != "" {
		o.Notes = append(o.Notes, "forward-pass metrics: "+why+"; busy time from the engine's other signals")
	}
}

// unknown says why s's busy time over a window ending now is not known, or
// "" when it is.
func (s *stream) unknown(now time.Time, quarantine time.Duration) string {
	switch {
	case !s.heard && s.dialErr != "":
		return s.endpoint + ": " + s.dialErr
	case !s.heard:
		return "no message from " + s.endpoint + " yet"
	case now.Sub(s.last) > SilentAfter:
		return fmt.Sprintf("%s silent for %.0f s (no heartbeat)", s.endpoint, now.Sub(s.last).Seconds())
	case !s.lostAt.IsZero() && now.Sub(s.lostAt) < quarantine:
		return fmt.Sprintf("%s: %s %.0f s ago; trusted again %.0f s after", s.endpoint, s.why, now.Sub(s.lostAt).Seconds(), quarantine.Seconds())
	}
	return ""
}

// Stats are one endpoint's totals, as the feed has heard them.
type Stats struct {
	Endpoint    string
	BusySeconds float64
	Messages    int64
	Lost        int64
}

// Stats returns each endpoint's totals.
func (f *Feed) Stats() []Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Stats, len(f.streams))
	for i, s := range f.streams {
		out[i] = Stats{s.endpoint, s.busy, s.messages, s.lost}
	}
	return out
}

// Malformed records a message of endpoint i that could not be read: its
// pass is lost.
func (f *Feed) Malformed(i int, err error, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.streams[i]
	s.lost++
	s.lostAt, s.why = at, err.Error()
}
