package parse

// exactFloat reads the common spellings of a float in an exposition
// (integers, "123.0", short decimals, "1.5e+06") when the result is exact
// in float64 arithmetic: a mantissa below 2^53 scaled by a power of ten of
// at most 10^22, both exactly representable, so one multiplication or
// division rounds correctly. This is Clinger's fast path, the one strconv
// itself tries first (atof64exact in
// https://github.com/golang/go/blob/go1.26.0/src/internal/strconv/atof.go).
// It gives strconv.ParseFloat's result bit for bit (FuzzExactFloat); ok is
// false for everything else, which is left to strconv.
func exactFloat(b []byte) (f float64, ok bool) {
	f, n, ok := exactFloatPrefix(b)
	return f, ok && n == len(b)
}

// exactFloatPrefix is exactFloat for the float that starts b: n is its
// length, and ok is false when the float there is not one exactFloat
// reads (what follows it is not looked at).
func exactFloatPrefix(b []byte) (f float64, n int, ok bool) {
	k := 0
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		k++
	}
	// Digits wrap the mantissa past 19 of them; such spellings are refused
	// below, before it is used.
	var mant uint64
	d0 := k
	for k < len(b) && b[k]-'0' <= 9 {
		mant = mant*10 + uint64(b[k]-'0')
		k++
	}
	digits, frac := k-d0, 0
	intMant, fracDigits := mant, byte(0) // fracDigits: the fraction's digits or-ed
	if k < len(b) && b[k] == '.' {
		k++
		f0 := k
		for k < len(b) && b[k]-'0' <= 9 {
			d := b[k] - '0'
			mant = mant*10 + uint64(d)
			fracDigits |= d
			k++
		}
		frac = k - f0
		digits += frac
	}
	if digits == 0 || digits > 19 {
		return 0, 0, false
	}
	exp := 0
	if k < len(b) && (b[k] == 'e' || b[k] == 'E') {
		k++
		eneg := false
		if k < len(b) && (b[k] == '+' || b[k] == '-') {
			eneg = b[k] == '-'
			k++
		}
		e0 := k
		for ; k < len(b) && b[k] >= '0' && b[k] <= '9'; k++ {
			if k-e0 == 3 {
				return 0, 0, false
			}
			exp = exp*10 + int(b[k]-'0')
		}
		if k == e0 {
			return 0, 0, false
		}
		if eneg {
			exp = -exp
		}
	}
	if fracDigits == 0 {
		// "454.0": a fraction of zeros would cost a division.
		mant, frac = intMant, 0
	}
	exp -= frac
	if mant>>53 != 0 {
		return 0, 0, false
	}
	f = float64(int64(mant)) // below 2^53: a signed conversion, one instruction
	switch {
	case mant == 0 || exp == 0:
	case exp > 0 && exp <= 22+15:
		if exp > 22 {
			// The excess of the exponent moves into the mantissa
			// while it stays exact.
			f *= float64pow10[exp-22]
			if f > 1e15 {
				return 0, 0, false
			}
			exp = 22
		}
		f *= float64pow10[exp]
	case exp < 0 && exp >= -22:
		f /= float64pow10[-exp]
	default:
		return 0, 0, false
	}
	if neg {
		f = -f
	}
	return f, k, true
}

// float64pow10 are the powers of ten float64 holds exactly.
var float64pow10 = [...]float64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
	1e20, 1e21, 1e22,
}
