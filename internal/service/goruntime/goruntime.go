// Package goruntime sizes the Go runtime of the serve process to what it
// watches: GOMAXPROCS to its targets' reads and the load (procs.go), the
// soft memory limit to its targets (memory.go). Each is left alone when
// its environment variable (GOMAXPROCS, GOMEMLIMIT) is set, or when it is
// turned off (serve's -auto-gomaxprocs=false, -auto-gomemlimit=false).
package goruntime

import (
	"context"
	"time"
)

// Options say what a Sizer sizes.
type Options struct {
	// Procs sizes GOMAXPROCS, Memory the soft memory limit.
	Procs, Memory bool
	// Interval is the targets' read interval.
	Interval time.Duration
	// ExtraMemoryPerTarget is what each target costs beyond the scrape and
	// the ledger (a recording's TSDB head), added to the memory limit.
	ExtraMemoryPerTarget int64
}

// Sizer sizes the runtime to a number of targets; GOMAXPROCS and the
// memory limit are the process's, so a process has one.
type Sizer struct{ opts Options }

// New returns a Sizer of opts.
func New(opts Options) *Sizer { return &Sizer{opts: opts} }

// SetTargets sizes the runtime for n targets (none: unchanged).
func (s *Sizer) SetTargets(n int) {
	if s.opts.Memory {
		setMemoryLimit(n, s.opts.ExtraMemoryPerTarget)
	}
	if s.opts.Procs {
		processors.setTargets(n, s.opts.Interval)
	}
}

// Run follows the load with GOMAXPROCS until ctx ends.
func (s *Sizer) Run(ctx context.Context) {
	if !s.opts.Procs {
		return
	}
	looks := time.NewTicker(procsEvery)
	defer looks.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-looks.C:
			processors.look(now)
		}
	}
}
