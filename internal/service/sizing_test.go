package service

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/record"
	"github.com/ptdmon/ptdmon/internal/service/goruntime"
)

// The runtime is sized as the flags say, and while serve records its
// memory limit counts the recording's TSDB head.
func TestSizing(t *testing.T) {
	cfg := &config.Config{Interval: config.Duration{Duration: 2 * time.Second}}
	for _, c := range []struct {
		opts Options
		want goruntime.Options
	}{
		{Options{}, goruntime.Options{Interval: 2 * time.Second}},
		{Options{AutoGOMAXPROCS: true, AutoGOMEMLIMIT: true}, goruntime.Options{Procs: true, Memory: true, Interval: 2 * time.Second}},
		{Options{AutoGOMEMLIMIT: true, Recorder: &record.Recorder{}}, goruntime.Options{Memory: true, Interval: 2 * time.Second, ExtraMemoryPerTarget: record.HeadBytesPerTarget}},
	} {
		if got := sizing(cfg, c.opts); got != c.want {
			t.Errorf("%+v: sized by %+v, want %+v", c.opts, got, c.want)
		}
	}
}
