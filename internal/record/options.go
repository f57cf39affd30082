package record

import (
	"log/slog"
	"time"
)

// Options configure a Recorder.
type Options struct {
	Dir string
	// Retention drops blocks older than this (0: 15 days, the TSDB's
	// default); MaxBytes drops the oldest blocks beyond this size (0: no
	// limit). Both act on whole blocks, as in Prometheus.
	Retention time.Duration
	MaxBytes  int64
	// Meta describes this process's recording: version, configuration, B_request,
	// interval, window. Targets, processes and sets are kept by the Recorder.
	Meta   Meta
	Logger *slog.Logger
	// Queue is the number of scrapes and ticks waiting to be written
	// (default 65,536); beyond it they are dropped, and the live view goes on.
	Queue int
}

// CheckpointDir holds the ledger's checkpoints beside the TSDB: the
// history's points as the live ledger computed and encoded them, one
// record per sealed segment (ledger.Checkpoint), so that a resume
// restores them rather than recomputing them from the recorded inputs
// (docs/runs.md#resume). The TSDB stays the recording; the checkpoint is a
// cache of what the ledger made of it, and a resume without one (a
// recording of an older build, a ledger configured otherwise, a damaged
// file) recomputes as before.
//
// Its files are numbered, *.ckpt; a file takes records until it holds as
// many points as the ledger keeps, then the next starts and all but the
// two newest are removed: the checkpoint holds between one and two
// histories, whatever the run's length.
const CheckpointDir = "checkpoint"
