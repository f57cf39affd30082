package service

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/buildinfo"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/record"
)

// OpenRecorder opens cfg's recording, nil when none is configured.
func OpenRecorder(cfg *config.Config, kv kvsize.Request, pools map[string]kvsize.Request, log *slog.Logger) (*record.Recorder, error) {
	if cfg.Record.Dir == "" {
		return nil, nil
	}
	text, hash, err := configText(cfg)
	if err != nil {
		return nil, err
	}
	return record.Create(record.Options{
		Dir:       cfg.Record.Dir,
		Retention: cfg.Record.Retention.Duration,
		MaxBytes:  cfg.Record.MaxBytes,
		Logger:    log,
		Meta: record.Meta{
			Version:      buildinfo.Get().Version,
			Config:       text,
			ConfigHash:   hash,
			KVRequest:    kv,
			PoolRequests: pools,
			Interval:     record.Duration(cfg.Interval.Duration),
			Window:       record.Duration(cfg.Window.Duration),
			MaxSeries:    cfg.MaxSeries,
			DirectReads:  cfg.Source == "",
		},
	})
}

// configText is the effective configuration, defaults included, as run.json
// keeps it, and the hash of its settings (config.Settings: not where the
// run is recorded or served), which tells two runs with the same settings.
func configText(cfg *config.Config) (text, hash string, err error) {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return "", "", fmt.Errorf("record the configuration: %w", err)
	}
	st := cfg.Settings()
	h, err := yaml.Marshal(&st)
	if err != nil {
		return "", "", fmt.Errorf("record the configuration: %w", err)
	}
	return string(b), record.HashConfig(string(h)), nil
}

// resume brings a recording's history back into l before the loops start.
func resume(rec *record.Recorder, l *ledger.Ledger, log *slog.Logger) {
	if rec == nil {
		return
	}
	start := time.Now()
	n, err := rec.Resume(l)
	if err != nil {
		// What was read stays; the run goes on recording after it.
		log.Error("resume from the recording failed part way", "dir", rec.Dir(), "err", err)
	}
	if n > 0 {
		log.Info("resumed from the recording", "dir", rec.Dir(), "points", n, "took", time.Since(start).Round(time.Millisecond))
	}
}

// recordHealth is /healthz's line on the recording: the process serves
// whatever the disk does, so this is said, not failed.
func recordHealth(rec *record.Recorder) func() []string {
	if rec == nil {
		return nil
	}
	return func() []string {
		msg, dropped := rec.Status()
		switch {
		case msg != "":
			return []string{fmt.Sprintf("recording to %s failing: %s (%d inputs dropped)", rec.Dir(), msg, dropped)}
		case dropped > 0:
			return []string{fmt.Sprintf("recording to %s: %d inputs dropped", rec.Dir(), dropped)}
		}
		return []string{"recording to " + rec.Dir()}
	}
}

// recordStatus is GET /api/v1/record.
type recordStatus struct {
	Dir     string `json:"dir"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
	Dropped uint64 `json:"dropped"`
}

func recordHandler(rec *record.Recorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		msg, dropped := rec.Status()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(recordStatus{Dir: rec.Dir(), OK: msg == "", Error: msg, Dropped: dropped})
	})
}

// PriorOf reads the capacities of the earlier run cfg names
// (capacities_from), nil when it names none.
func PriorOf(cfg *config.Config) (*advice.Prior, error) {
	if cfg.CapacitiesFrom == "" {
		return nil, nil
	}
	return PriorFrom(cfg.CapacitiesFrom, cfg.Interval.Duration, cfg.Window.Duration)
}

// PriorFrom reads the capacities of the run recorded in dir, for a run
// read at interval and window W: a run read at others is refused, its
// windowed rates not being this run's.
func PriorFrom(dir string, interval, window time.Duration) (*advice.Prior, error) {
	run, err := record.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("capacities_from: %w", err)
	}
	defer run.Close()
	m := run.Meta()
	if time.Duration(m.Interval) != interval || time.Duration(m.Window) != window {
		return nil, fmt.Errorf("capacities_from: %s ran at interval %v, window %v; this run at %v, %v: its capacities are of other rates",
			dir, time.Duration(m.Interval), time.Duration(m.Window), interval, window)
	}
	p, err := run.Prior()
	if err != nil {
		return nil, fmt.Errorf("capacities_from: %w", err)
	}
	return p, nil
}
