package goruntime

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
// The floor is low enough that from about 170 targets the formula sets the
// limit (139 MiB at 200): the hour of per-instance history the ledger keeps
// (at most 720,000 instance-points whatever the number of targets, about 70
// bytes each: 50 MiB) and the targets' state fit under it with a quarter to
// spare for garbage between collections.
const (
	memoryBase      = 64 << 20
	memoryPerTarget = 384 << 10
	memoryFloor     = 128 << 20 // a few targets with large bodies are not squeezed
)

// setMemoryLimit sizes the limit for targets, each of which costs extra
// bytes more elsewhere in the process (Options.ExtraMemoryPerTarget: a
// recording's TSDB head, record.HeadBytesPerTarget): a limit that left them out would have the
// collector run without end to keep the heap under it.
func setMemoryLimit(targets int, extra int64) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || targets == 0 {
		return
	}
	debug.SetMemoryLimit(max(memoryFloor, memoryBase+int64(targets)*(memoryPerTarget+extra)))
}
