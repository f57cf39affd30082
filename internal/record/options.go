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
