package record

import "errors"

// The recording is a Prometheus TSDB, and github.com/prometheus/prometheus/tsdb
// brings most of the binary's packages with it (docs/performance.md, "The
// binary's weight"). Building with -tags norecord leaves it out: Included is
// false, Create and Open answer ErrLeftOut, and nothing imports the TSDB.
// The default build keeps everything.

// ErrLeftOut is what a build with -tags norecord answers for anything that
// writes or reads a recording.
var ErrLeftOut = errors.New("this build leaves recording out (-tags norecord); the default build records, replays and reports on recordings")
