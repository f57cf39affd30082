package main

import (
	"fmt"
	"io"

	"github.com/ptdmon/ptdmon/internal/buildinfo"
	"github.com/ptdmon/ptdmon/internal/cli"
)

func init() { register("version", "print ptdmon's version, commit and Go version", runVersion) }

func runVersion(args []string, stdout, stderr io.Writer) int {
	c := cli.New("version", "[flags]", "Prints ptdmon's version, the commit it was built from and the Go version.",
		cli.NoArgs, stdout, stderr)
	return c.Run(args, func([]string) error {
		i := buildinfo.Get()
		dirty := ""
		if i.Modified {
			dirty = " (modified)"
		}
		fmt.Fprintf(stdout, "ptdmon %s\n  commit: %s%s\n  go:     %s\n", i.Version, i.Revision, dirty, i.GoVersion)
		return nil
	})
}
