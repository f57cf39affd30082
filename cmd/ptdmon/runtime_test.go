package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/service"
)

// serve and the commands that serve as it does can each turn off the
// sizing of GOMAXPROCS and of the memory limit.
func TestRuntimeFlags(t *testing.T) {
	for _, name := range []string{"serve", "demo", "record"} {
		_, out, _ := runCmd(name, "-h")
		for _, f := range []string{"-auto-gomaxprocs", "-auto-gomemlimit"} {
			if !strings.Contains(out, f) {
				t.Errorf("ptdmon %s -h does not list %s", name, f)
			}
		}
	}
	for _, c := range []struct {
		args          []string
		procs, memory bool
	}{
		{nil, true, true},
		{[]string{"-auto-gomaxprocs=false"}, false, true},
		{[]string{"-auto-gomemlimit=false"}, true, false},
		{[]string{"-auto-gomaxprocs=false", "-auto-gomemlimit=false"}, false, false},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		r := defineRuntimeFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		var opts service.Options
		r.set(&opts)
		if opts.AutoGOMAXPROCS != c.procs || opts.AutoGOMEMLIMIT != c.memory {
			t.Errorf("%q: GOMAXPROCS sized %v, memory limit sized %v; want %v, %v", c.args, opts.AutoGOMAXPROCS, opts.AutoGOMEMLIMIT, c.procs, c.memory)
		}
	}
}
