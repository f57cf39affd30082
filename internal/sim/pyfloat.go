package sim

import (
	"math"
	"strconv"
)

// appendPyFloat appends v the way Python's prometheus_client prints sample
// values and `le` bounds (floatToGoString): repr(float) — shortest
// round-trip digits, fixed notation for decimal exponents in [-4, 16),
// always with a fractional part ("1.0") — except that positive numbers with
// more than six integer digits are rewritten to exponent form with a literal
// "e+0" prefix ("1.7537953269352946e+09", and bug-compatibly "e+010" from
// ten digits on). Collectors that compare text byte-for-byte with a real
// engine see the same bytes.
func appendPyFloat(dst []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-Inf"...)
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	}
	// Fast path for the common case (counts, bucket totals, small integer
	// bounds): an integer below 1e6 prints as its digits plus ".0".
	if v >= 0 && v < 1e6 && v == math.Trunc(v) && !(v == 0 && math.Signbit(v)) {
		dst = strconv.AppendInt(dst, int64(v), 10)
		return append(dst, '.', '0')
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], v, 'e', -1, 64)
	// e is "[-]d[.ddd]e±XX"; split into sign, digits and exponent.
	neg := false
	if e[0] == '-' {
		neg = true
		e = e[1:]
	}
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	if v == 0 {
		exp = 0
	}
	if neg {
		dst = append(dst, '-')
	}
	if exp < -4 || exp >= 16 {
		// Python repr scientific: d[.ddd]e±XX with at least two exponent digits.
		dst = append(dst, digits[0])
		if nd > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:nd]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	if !neg && exp > 5 {
		// floatToGoString: Go switches to exponents sooner than Python. The
		// mantissa is every digit with trailing zeros (and a bare dot) removed.
		end := nd
		for end > 1 && digits[end-1] == '0' {
			end--
		}
		dst = append(dst, digits[0])
		if end > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:end]...)
		}
		dst = append(dst, "e+0"...)
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	}
	// 0 <= exp < 16: integer part is digits[0..exp], padded with zeros.
	for k := 0; k <= exp; k++ {
		if k < nd {
			dst = append(dst, digits[k])
		} else {
			dst = append(dst, '0')
		}
	}
	dst = append(dst, '.')
	if nd > exp+1 {
		return append(dst, digits[exp+1:nd]...)
	}
	return append(dst, '0')
}

// pyFloat is appendPyFloat for cold paths.
func pyFloat(v float64) string { return string(appendPyFloat(nil, v)) }
