package record

import "errors"

// The recording is a Prometheus TSDB, and github.com/prometheus/prometheus/tsdb
// brings most of the binary's packages with it (docs/performance.md, "The
// binary's weight"). Building with -tags norecord leaves it out: Included is
// false, Create and Open answer ErrLeftOut, and nothing imports the TSDB.
// The default build keeps everything.

// ErrLeftOut is what a build with -tags norecord answers for anything that
// writes or reads a recording.
var ErrLeftOut = errors.New("this ptdmon is built with -tags norecord, which leaves recording out; recording, replay and reports from a recording need the default build")
