package reqtrace

// Violation is a broken link of the causal chain (docs/trtllm.md#causal-chain): Earlier
// must not come after Later, but by the (aligned) clocks it does, By seconds.
type Violation struct {
	Earlier    string  `json:"earlier"`
	Later      string  `json:"later"`
	By         float64 `json:"by_seconds"`
	CrossClock bool    `json:"cross_clock"`
}

// checkChain walks the chain over the stamps that are known, comparing each
// with the previous known one, plus the side link gen.first_token ≤
// gen.last_token. A link across clocks that fails means the alignment cannot
// be trusted; a link within one clock that fails is an engine-side oddity.
func checkChain(chain []Stamp, side [][2]Stamp) []Violation {
	var out []Violation
	var prev *Stamp
	for i := range chain {
		s := &chain[i]
		if s.T == 0 {
			continue
		}
		if prev != nil {
			if v, bad := link(*prev, *s); bad {
				out = append(out, v)
			}
		}
		prev = s
	}
	for _, l := range side {
		if l[0].T == 0 || l[1].T == 0 {
			continue
		}
		if v, bad := link(l[0], l[1]); bad {
			out = append(out, v)
		}
	}
	return out
}

func link(a, b Stamp) (Violation, bool) {
	if b.T-a.T >= -Tolerance {
		return Violation{}, false
	}
	return Violation{Earlier: a.Name, Later: b.Name, By: a.T - b.T, CrossClock: a.Clock != b.Clock}, true
}

func firstCross(vs []Violation) (Violation, bool) {
	for _, v := range vs {
		if v.CrossClock {
			return v, true
		}
	}
	return Violation{}, false
}
