package main

import (
	"flag"

	"github.com/ptdmon/ptdmon/internal/service"
)

// runtimeFlags are the flags that turn off the sizing of the Go runtime
// (internal/service/goruntime), as Prometheus' -auto-gomaxprocs and
// -auto-gomemlimit do; serve, demo and record share them.
type runtimeFlags struct{ procs, memory *bool }

func defineRuntimeFlags(fs *flag.FlagSet) runtimeFlags {
	return runtimeFlags{
		procs:  fs.Bool("auto-gomaxprocs", true, "size GOMAXPROCS to the targets' reads and the load, unless GOMAXPROCS is set (=false: the runtime's own choice)"),
		memory: fs.Bool("auto-gomemlimit", true, "size the soft memory limit to the targets, unless GOMEMLIMIT is set (=false: no limit)"),
	}
}

// set gives the flags' values to opts.
func (r runtimeFlags) set(opts *service.Options) {
	opts.AutoGOMAXPROCS, opts.AutoGOMEMLIMIT = *r.procs, *r.memory
}
