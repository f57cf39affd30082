package reqfeed

import (
	"math"
	"time"
)

// clock puts the engine's steady-clock seconds on the wall clock. theta is
// steady − wall in seconds.
//
// Where the server answers GET /steady_clock_offset (TensorRT-LLM's own
// probe endpoint, docs/trtllm.md#offset-estimate), the least-delay probe
// gives theta within ± its delay / 2. Otherwise theta is bounded from
// below by the records themselves: a record polled at wall time D
// finished by D, so theta ≥ its last steady instant − D; the tightest
// bound seen so far is used. It never places a request earlier than it
// was, and later by at most the time from the newest request's end to
// the poll (up to one poll interval while requests keep finishing).
type clock struct {
	theta  float64
	known  bool
	probed bool
	delay  float64
}

// probe offers one exchange: o and d wall seconds around the call, r and t
// the server's steady clock when it received and answered it.
func (c *clock) probe(o, r, t, d float64) bool {
	delay := (d - o) - (t - r)
	if !(r > 0 && t >= r && d >= o && delay >= 0) || math.IsInf(r+t, 0) {
		return false
	}
	if c.probed && delay >= c.delay {
		return true
	}
	c.theta, c.known, c.probed, c.delay = ((r-o)+(t-d))/2, true, true, delay
	return true
}

// bound offers the latest steady instant of the records polled at wall
// time d.
func (c *clock) bound(last, d float64) {
	if c.probed || last <= 0 {
		return
	}
	if th := last - d; !c.known || th > c.theta {
		c.theta, c.known = th, true
	}
}

func (c *clock) wall(steady float64) time.Time {
	return unix(steady - c.theta)
}

func unix(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9))
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
