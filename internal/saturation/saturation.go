// Package saturation is the one notion of a decode batch at its limit that
// the verdict (internal/diagnose) and the advisor's capacity learner
// (internal/advice) share, so that one never calls decode saturated while
// the other says it has room (docs/advisor.md#limits, docs/web.md#signals).
package saturation

// PinSeconds is how far back a decode batch must have stayed at its level
// to count as pinned at its limit.
const PinSeconds = 10

// MinSamples is how many samples of the newest PinSeconds the rule needs.
const MinSamples = 5

// Pinned reports whether a decode instance's running batch, sampled over
// the newest PinSeconds (oldest first), sat at its highest level, with at
// least 2 requests, in at least 80% of the samples: a scheduler at its max
// batch size admits exactly as many as finish, while one with room moves
// with arrivals. Every other sample is within 5% of that level or a dip:
// one sample below it between two at it, as low as it comes (a batch of 4
// read once as 3, between a finish and the next admission, is still at its
// limit). Two samples more than 5% below it in a row are a batch with
// room. level is the highest level; with fewer than MinSamples samples
// nothing is pinned.
func Pinned(running []float64) (pinned bool, level float64) {
	if len(running) < MinSamples {
		return false, 0
	}
	hi := running[0]
	for _, v := range running {
		hi = max(hi, v)
	}
	at := 0
	for i, v := range running {
		switch {
		case v == hi:
			at++
		case v >= 0.95*hi:
		case i > 0 && running[i-1] < 0.95*hi:
			return false, 0
		}
	}
	return hi >= 2 && float64(at) >= 0.8*float64(len(running)), hi
}
