package kvsize

import "math"

// arith is int64 arithmetic that records overflow instead of wrapping, so a
// hostile config cannot produce a plausible-looking wrong number.
type arith struct{ err error }

func (a *arith) mul(xs ...int64) int64 {
	r := int64(1)
	for _, x := range xs {
		if x < 0 || (x != 0 && r > math.MaxInt64/x) {
			a.fail()
			return 0
		}
		r *= x
	}
	return r
}

func (a *arith) add(xs ...int64) int64 {
	var r int64
	for _, x := range xs {
		if x < 0 || r > math.MaxInt64-x {
			a.fail()
			return 0
		}
		r += x
	}
	return r
}

func (a *arith) fail() {
	if a.err == nil {
		a.err = invalidf("sizes overflow int64; check the config's numbers")
	}
}
