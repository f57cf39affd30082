// Package parsetest makes test expositions for the tests and benchmarks of
// parse and of its readers: a target's successive expositions.
package parsetest

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Successive returns n expositions that follow body as one target's
// scrapes do: the same lines in the same order, with about share of the
// sample values advanced from one exposition to the next (counters and
// buckets grow, gauges move), written as Python's prometheus_client
// writes floats.
func Successive(body []byte, n int, share float64, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	out := make([][]byte, 0, n)
	for range n {
		var b bytes.Buffer
		for i, line := range lines {
			if line == "" || line[0] == '#' || rng.Float64() >= share {
				b.WriteString(line + "\n")
				continue
			}
			sp := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[sp+1:], 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				b.WriteString(line + "\n")
				continue
			}
			if v == math.Trunc(v) {
				v += float64(1 + rng.IntN(9))
			} else {
				v *= 1 + rng.Float64()/100
			}
			lines[i] = line[:sp+1] + pyFloat(v)
			b.WriteString(lines[i] + "\n")
		}
		out = append(out, b.Bytes())
	}
	return out
}

// pyFloat writes v as prometheus_client's floatToGoString does: Python's
// repr, with large numbers in exponent form
// (https://github.com/prometheus/client_python/blob/v0.21.1/prometheus_client/utils.py).
func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if v >= 1e16 || v != 0 && math.Abs(v) < 1e-4 {
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		s, dot = s+".0", len(s)
	}
	if v > 0 && dot > 6 {
		m := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0")
		m = strings.TrimSuffix(m, ".")
		return m + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}

// Edit derives a body from a: the bytes of ops say which lines change
// and how (a value changed, a line removed, repeated, swapped with the
// next, a byte of its text changed, a malformed line inserted), as a
// target's next exposition may differ from its last.
func Edit(a string, ops []byte) string {
	lines := strings.Split(a, "\n")
	for len(ops) >= 2 && len(lines) > 0 {
		op, j := ops[0]%7, int(ops[1])%len(lines)
		ops = ops[2:]
		switch op {
		case 0, 1: // a new value
			if sp := strings.LastIndexByte(lines[j], ' '); sp > 0 {
				lines[j] = lines[j][:sp+1] + strconv.Itoa(int(op)*j+len(ops))
			}
		case 2:
			lines = append(lines[:j], lines[j+1:]...)
		case 3:
			lines = append(lines[:j+1], lines[j:]...)
		case 4:
			if j+1 < len(lines) {
				lines[j], lines[j+1] = lines[j+1], lines[j]
			}
		case 5: // a byte of the text, often of a label value or name
			if l := lines[j]; len(l) > 0 && len(ops) > 0 {
				k := int(ops[0]) % len(l)
				lines[j] = l[:k] + string(rune('0'+ops[0]%75)) + l[k+1:]
				ops = ops[1:]
			}
		case 6:
			lines = append(lines[:j], append([]string{"a{b=\"c\" 1"}, lines[j:]...)...)
		}
	}
	return strings.Join(lines, "\n")
}
