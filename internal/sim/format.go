package sim

import "strings"

// Format renders one instance's /metrics in the wire format of one engine;
// it is part of the engine's Profile. A new engine is a new Profile; the
// model does not change.
type Format interface {
	// ContentType is the Content-Type header the engine sends.
	ContentType() string
	// Render appends the exposition of v to dst. It must not retain v.
	Render(dst []byte, v *InstanceView) []byte
}

// InstanceView is everything a Format may print about one instance.
type InstanceView struct {
	Name      string
	Role      string
	Model     string
	Connector string
	Group     Group // for per-engine format options (old names etc.)
	Engines   []*EngineStats
	Asleep    bool // in sleep mode (Scenario.Asleep)
}

// textContentType is what prometheus_client's generate_latest sends.
const textContentType = "text/plain; version=0.0.4; charset=utf-8"

// label is one name="value" pair; label sets are kept sorted by name because
// prometheus_client prints them sorted.
type label struct{ k, v string }

// appendLabels writes {a="x",b="y"} merging the sorted base set with up to
// two extra pairs (given in name order) without allocating.
func appendLabels(dst []byte, base []label, extra ...label) []byte {
	if len(base) == 0 && len(extra) == 0 {
		return dst
	}
	dst = append(dst, '{')
	first := true
	put := func(l label) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, l.k...)
		dst = append(dst, '=', '"')
		dst = appendEscaped(dst, l.v)
		dst = append(dst, '"')
	}
	i, j := 0, 0
	for i < len(base) || j < len(extra) {
		if j >= len(extra) || (i < len(base) && base[i].k < extra[j].k) {
			put(base[i])
			i++
		} else {
			put(extra[j])
			j++
		}
	}
	return append(dst, '}')
}

func appendEscaped(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, "\\\"\n") {
		return append(dst, s...)
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '"':
			dst = append(dst, '\\', '"')
		case '\n':
			dst = append(dst, '\\', 'n')
		default:
			dst = append(dst, s[i])
		}
	}
	return dst
}

func appendHeader(dst []byte, name, help, typ string) []byte {
	dst = append(dst, "# HELP "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = append(dst, help...) // our help strings need no escaping
	dst = append(dst, "\n# TYPE "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = append(dst, typ...)
	return append(dst, '\n')
}

func appendSample(dst []byte, name, suffix string, base []label, v float64, extra ...label) []byte {
	dst = append(dst, name...)
	dst = append(dst, suffix...)
	dst = appendLabels(dst, base, extra...)
	dst = append(dst, ' ')
	dst = appendPyFloat(dst, v)
	return append(dst, '\n')
}
