package record

// HeadBytesPerTarget is about what a recording's TSDB head holds in memory
// per target it records: some 180 series of an engine's canonical values,
// each with its labels, its index entries and the open chunk of its newest
// samples, about 1.5 KB a series. serve adds it to its soft memory limit
// while it records: a limit that left it out has the garbage collector run
// without end to keep the heap under it (16% of serve's CPU at 200
// targets; docs/performance.md).
const HeadBytesPerTarget = 320 << 10
