package scheduler

import (
	"os"
	"runtime/debug"
)

// A soft memory limit sized by the number of targets keeps the garbage
// collector from letting the heap double the memory in use when many
// targets are read at once (the first reads of a thousand targets, all in
// one interval): the heap stays near what the targets need. GOMEMLIMIT, when
// set, is the user's choice and left alone. See docs/performance.md.
//
// The base covers the hour of per-instance history too: the ledger keeps
// at most 720,000 instance-points whatever the number of targets, encoded
// in about 70 bytes each (50 MiB), so the limit at 200 targets (139 MiB)
// holds an hour of them with a third to spare for the garbage between
// collections.
const (
	memoryBase      = 64 << 20
	memoryPerTarget = 384 << 10
	memoryFloor     = 128 << 20 // a few targets with large bodies are not squeezed
)

func setMemoryLimit(targets int) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || targets == 0 {
		return
	}
	debug.SetMemoryLimit(max(memoryFloor, memoryBase+int64(targets)*memoryPerTarget))
}
