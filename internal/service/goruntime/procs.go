package goruntime

import (
	"math"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ptdmon runs on as many processors as its reads need, not on every core
// of the machine. A read costs well under a millisecond of CPU and spends
// most of its time waiting on the target; with a processor (P) per core,
// every wake-up of a scrape's goroutines hands the work to an idle P whose
// thread spins looking for more, and at 200 targets that spinning cost
// about a sixth of the process's CPU (docs/performance.md#processors).
//
// The targets give the least: one P per readsPerProc reads a second (a
// small part of one core for bodies of a few thousand series). The CPU
// the process takes then adds one while its Ps are busier than
// busyAbove (larger bodies, an engine with tens of thousands of series,
// the API under load) and gives it back below busyBelow, never beyond
// what the runtime would use by itself (the cores, or the container's CPU
// limit). GOMAXPROCS, when set, is the user's choice and left alone.
const (
	readsPerProc = 250
	busyAbove    = 0.6
	busyBelow    = 0.2
	procsEvery   = 5 * time.Second
)

// procsFor is the least processors for targets read every interval, at
// most limit.
func procsFor(targets int, interval time.Duration, limit int) int {
	perSecond := float64(targets) / max(interval.Seconds(), 1e-3)
	return min(max(int(math.Ceil(perSecond/readsPerProc)), 1), max(limit, 1))
}

// nextProcs is the processors after a span in which n of them were busy
// for the fraction busy of it.
func nextProcs(n, least, limit int, busy float64) int {
	switch {
	case busy > busyAbove && n < limit:
		n++
	case busy < busyBelow && n > least:
		n--
	}
	return min(max(n, least), max(limit, 1))
}

// processors is the process's: GOMAXPROCS is one for all of it.
var processors procs

// procs sizes GOMAXPROCS; the zero value is ready.
type procs struct {
	mu      sync.Mutex
	off     bool // GOMAXPROCS is the user's
	limit   int  // the runtime's own choice
	least   int
	n       int
	cpu     time.Duration // the process's CPU at the last look
	at      time.Time
	started bool
	sized   bool // set from targets once
	// cpuNow reads the process's CPU time and apply sets GOMAXPROCS
	// (tests replace them).
	cpuNow func() (time.Duration, bool)
	apply  func(int)
}

func (p *procs) init() {
	if p.started {
		return
	}
	p.started = true
	_, p.off = os.LookupEnv("GOMAXPROCS")
	p.limit = runtime.GOMAXPROCS(0)
	p.n = p.limit
	p.cpuNow = processCPU
	p.apply = func(n int) { runtime.GOMAXPROCS(n) }
}

// setTargets makes targets read every interval the least the processors
// go down to.
func (p *procs) setTargets(targets int, interval time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	if p.off || targets == 0 {
		return
	}
	p.least = procsFor(targets, interval, p.limit)
	if !p.sized {
		// From the runtime's choice down to what the targets need; the
		// load adds to it from there.
		p.sized = true
		p.set(p.least)
		return
	}
	p.set(max(p.least, p.n))
}

// look measures how busy the processors were since the last look and
// adds or removes one.
func (p *procs) look(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	cpu, ok := p.cpuNow()
	if p.off || p.least == 0 || !ok {
		return
	}
	if !p.at.IsZero() && now.After(p.at) {
		busy := float64(cpu-p.cpu) / float64(now.Sub(p.at)) / float64(p.n)
		p.set(nextProcs(p.n, p.least, p.limit, busy))
	}
	p.cpu, p.at = cpu, now
}

func (p *procs) set(n int) {
	if n != p.n {
		p.apply(n)
		p.n = n
	}
}

// processCPU is the CPU time the process has taken, user and system.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
