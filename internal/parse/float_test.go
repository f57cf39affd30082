package parse

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// FuzzExactFloat: what exactFloat reads, strconv.ParseFloat reads to the
// same bits; what it leaves, strconv decides. The same for the prefix
// exactFloatPrefix reads.
func FuzzExactFloat(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "+0.0", "0.0", "454.0", "1.808791e+06", "2.1474836e+010", "66.06332657727272",
		"0.5846493559413799", "1.7960881021234567e+09", "9007199254740993", "9007199254740992.0",
		"1e22", "1e23", "1e37", "9e37", "123456789e30", "1e-22", "1e-23", "0.000001", ".5", "5.", "1.e5",
		"1e", "e5", "1e+", "--1", "1.2.3", "1e1000", "00000000000000000000001", "1_0", "0x10", "Inf", "NaN",
		"12345678901234567890", "1234567890123456789", "4.9406564584124654e-324", "1.7976931348623157e308", "1.5 2", "3\n", "1e5x", "1.0\r", "12.5.1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, n, ok := exactFloatPrefix([]byte(s)); ok {
			want, err := strconv.ParseFloat(s[:n], 64)
			if err != nil || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%q: exactFloatPrefix reads %q as %v, strconv %v %v", s, s[:n], got, want, err)
			}
		}
		got, ok := exactFloat([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q: exactFloat reads %v, strconv refuses it: %v", s, got, err)
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%q: exactFloat %v (%#x), strconv %v (%#x)", s, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	})
}

// The spellings engines write take the fast path.
func TestExactFloatTakesTheCommonSpellings(t *testing.T) {
	for _, s := range []string{"0.0", "454.0", "-3", "1.808791e+06", "2.1474836e+010", "0.25", "66.0633265772", "1e-3"} {
		if _, ok := exactFloat([]byte(s)); !ok {
			t.Errorf("%q: not read by the fast path", s)
		}
	}
}

// Random spellings of the shapes engines write (digits, a point, an
// exponent) agree with strconv, the fast path's boundaries included.
func TestExactFloatAgreesWithStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		return string(b)
	}
	fast := 0
	for range 200_000 {
		s := digits(1 + rng.IntN(12))
		if rng.IntN(2) == 0 {
			s += "." + digits(rng.IntN(12))
		}
		if rng.IntN(3) == 0 {
			s += "e" + []string{"", "+", "-"}[rng.IntN(3)] + strconv.Itoa(rng.IntN(40))
		}
		if rng.IntN(4) == 0 {
			s = "-" + s
		}
		got, ok := exactFloat([]byte(s))
		if !ok {
			continue
		}
		fast++
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%q: exactFloat %v, strconv %v %v", s, got, want, err)
		}
	}
	if fast < 100_000 {
		t.Errorf("the fast path read %d of 200,000 spellings", fast)
	}
}
