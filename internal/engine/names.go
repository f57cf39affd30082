package engine

import (
	"slices"
	"strings"
)

// KnownNames lists every metric name the adapters read, as exposed by the
// engines (histograms by family name, without _bucket/_sum/_count), so
// generated queries can be checked against what ptdmon really understands.
func KnownNames() []string {
	var out []string
	for _, a := range Adapters() {
		for _, f := range a.Families {
			out = append(out, f.Name)
			if bare, ok := strings.CutPrefix(f.Name, a.Prefix); ok && a.PrefixOptional && !f.PrefixOnly {
				out = append(out, bare)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
