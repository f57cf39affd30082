package main

import (
	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/record"
)

// recordingIncluded says this build writes and reads recordings: false in
// a build with -tags norecord, which leaves the TSDB out (docs/performance.md,
// "The binary's weight"). Tests turn it off to see the commands' answer.
var recordingIncluded = record.Included

// leftOut is the usage error of a command that needs a recording in a build
// that leaves recording out, nil in the default build.
func leftOut() error {
	if recordingIncluded {
		return nil
	}
	return cli.Usage(record.ErrLeftOut)
}
