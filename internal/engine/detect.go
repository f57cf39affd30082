package engine

import (
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/parse"
)

// A Match is one registered engine whose families an exposition carries,
// whether ptdmon reads those families or not.
type Match struct {
	Engine Engine
	// Prefix is the adapter's prefix when a family carries it; empty when
	// only bare names of an adapter whose prefix is optional were found.
	Prefix string
	// Families counts the families claimed (a histogram's _bucket, _sum
	// and _count are one family).
	Families int
}

// Detect lists the registered engines whose families body carries, in the
// adapters' order. It goes by family names alone, as detection is
// documented to (docs/adapters.md): one family of any kind, read or
// skipped, is enough.
func Detect(body []byte, contentType string) ([]Match, error) {
	adapters := snapshot()
	var p parse.Parser
	seen := map[string]bool{}
	prefixed := make([]bool, len(adapters))
	counts := make([]int, len(adapters))
	err := p.Parse(body, contentType, func(s *parse.Sample) error {
		// Families as the Reader names them (a histogram's parts are one,
		// its _created samples another), so the count matches inspect's.
		fam := familyOf(string(s.Name))
		if seen[fam] {
			return nil
		}
		seen[fam] = true
		i := claim(adapters, string(s.Name))
		if i < 0 {
			return nil
		}
		counts[i]++
		if strings.HasPrefix(fam, adapters[i].Prefix) {
			prefixed[i] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Match
	for i, a := range adapters {
		if counts[i] == 0 {
			continue
		}
		m := Match{Engine: a.Engine, Families: counts[i]}
		if prefixed[i] {
			m.Prefix = a.Prefix
		}
		out = append(out, m)
	}
	return out, nil
}

// detectFallback tells the engine of an exposition none of whose families
// was read (only histograms ptdmon skips, or a partial dump): the parser
// skips such families unseen, so their names are looked at again here.
// This runs only when a read found nothing, never on a steady-state read.
func (r *Reader) detectFallback(body []byte, contentType string) (uint64, error) {
	ms, err := Detect(body, contentType)
	if err != nil {
		return 0, err
	}
	var found uint64
	for _, m := range ms {
		for i, a := range r.adapters {
			if a.Engine == m.Engine {
				found |= 1 << i
			}
		}
	}
	return found, nil
}

// noEngine is the error of an exposition that carries no registered
// engine's family.
func (r *Reader) noEngine() error {
	var known []string
	for _, a := range r.adapters {
		known = append(known, a.Display+" ("+a.Prefix+")")
	}
	return fmt.Errorf("%w: no %s metrics in it", ErrUnusable, orList(known))
}

// mixed is the error of an exposition that carries the families of
// several engines (bit i: adapter i).
func (r *Reader) mixed(engines uint64) error {
	var found []string
	for i, a := range r.adapters {
		if engines&(1<<i) != 0 {
			found = append(found, a.Prefix)
		}
	}
	return fmt.Errorf("%w: it mixes metrics of several engines (%s); set the target's engine", ErrUnusable, strings.Join(found, ", "))
}
