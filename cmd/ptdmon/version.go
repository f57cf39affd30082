package main

import (
	"fmt"
	"io"

	"github.com/ptdmon/ptdmon/internal/buildinfo"
)

func init() { register("version", "print ptdmon's version, commit and Go version", runVersion) }

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: ptdmon version")
		return 2
	}
	i := buildinfo.Get()
	dirty := ""
	if i.Modified {
		dirty = " (modified)"
	}
	fmt.Fprintf(stdout, "ptdmon %s\n  commit: %s%s\n  go:     %s\n", i.Version, i.Revision, dirty, i.GoVersion)
	return 0
}
