package cli

import "github.com/ptdmon/ptdmon/internal/buildinfo"

// Version is the running build's version on one line: the linked or module
// version, else "devel" with the commit Go recorded in the binary.
func Version() string {
	i := buildinfo.Get()
	if i.Version != "" && i.Version != "(devel)" {
		return i.Version
	}
	if i.Revision == "unknown" {
		return "devel"
	}
	rev := i.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if i.Modified {
		rev += "-dirty"
	}
	return "devel " + rev
}
