package sim

import (
	"math"
	"strconv"
	"testing"
)

// Expected strings are what CPython 3 + prometheus_client's floatToGoString
// print for these values.
func TestPyFloat(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0, "0.0"},
		{1, "1.0"},
		{0.5, "0.5"},
		{2.5, "2.5"},
		{32, "32.0"},
		{100000, "100000.0"},
		{999999, "999999.0"},
		{1000000, "1e+06"},
		{1234567, "1.234567e+06"},
		{1753795326.9352946, "1.7537953269352946e+09"},
		{1073741824, "1.073741824e+09"},
		{12345678901, "1.2345678901e+010"},
		{1.5e12, "1.5e+012"},
		{1e16, "1e+16"},
		{1.5e16, "1.5e+16"},
		{9.75010481363281e-06, "9.75010481363281e-06"},
		{0.0001, "0.0001"},
		{0.00012, "0.00012"},
		{0.001, "0.001"},
		{0.8371284457403783, "0.8371284457403783"},
		{-2.5, "-2.5"},
		{math.Copysign(0, -1), "-0.0"},
		{-3, "-3.0"},
		{999999.5, "999999.5"},
		{123456.0, "123456.0"},
		{-1234567, "-1234567.0"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{2048, "2048.0"},
		{8.589934592e+09, "8.589934592e+09"},
	}
	for _, c := range cases {
		if got := pyFloat(c.v); got != c.want {
			t.Errorf("pyFloat(%v) = %q, want %q", c.v, got, c.want)
		}
		if !math.IsInf(c.v, 0) {
			back, err := strconv.ParseFloat(pyFloat(c.v), 64)
			if err != nil || back != c.v {
				t.Errorf("pyFloat(%v) does not round-trip: %v %v", c.v, back, err)
			}
		}
	}
	if got := pyFloat(math.NaN()); got != "NaN" {
		t.Errorf("NaN = %q", got)
	}
}
