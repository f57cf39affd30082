package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/record"
	"github.com/ptdmon/ptdmon/internal/report"
)

func init() { loadRecording = recordingInput }

// recordingInput reads a recording (serve -record, ptdmon record) as the
// report's input: the points the live ledger computed, replayed from the
// recorded inputs, and what ran.
func recordingInput(dir string) (report.Input, error) {
	if err := leftOut(); err != nil {
		return report.Input{}, err
	}
	run, err := record.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return report.Input{}, fmt.Errorf("%s: %w (no %s)", dir, errNotRecording, record.MetaFile)
	}
	if err != nil {
		return report.Input{}, err
	}
	defer run.Close()
	pts, err := run.Points(time.Time{}, time.Time{})
	if err != nil {
		return report.Input{}, err
	}
	if len(pts) == 0 && len(run.Lost()) > 0 {
		_, _, err := run.Span() // says what was lost
		return report.Input{}, fmt.Errorf("%s: %w", dir, err)
	}
	meta := reportMeta(run.Meta())
	meta.Name = filepath.Base(filepath.Clean(dir))
	for _, l := range run.Lost() {
		rl := report.Loss{File: l.File, Reason: l.Reason, From: l.From, To: l.To}
		if l.InWAL {
			rl.Reason += "; its span was read from the WAL"
			rl.From, rl.To = time.Time{}, time.Time{}
		}
		meta.Lost = append(meta.Lost, rl)
	}
	return report.Input{Meta: meta, Points: pts, Buckets: recordedBuckets(dir)}, nil
}

// recordedBuckets gives the report the latency histograms' increases over
// a span, the deployment's and each pool's (record.Run.Latencies).
func recordedBuckets(dir string) func(from, to time.Time) (report.Latencies, error) {
	return func(from, to time.Time) (report.Latencies, error) {
		run, err := record.Open(dir)
		if err != nil {
			return report.Latencies{}, err
		}
		defer run.Close()
		whole, pools, err := run.Latencies(from, to)
		return report.Latencies{Whole: whole, Pools: pools}, err
	}
}

// reportMeta is the recording's description in the report's terms; the
// SLO thresholds are those of the recorded configuration.
func reportMeta(m record.Meta) report.Meta {
	out := report.Meta{RunID: m.RunID, BRequest: m.KVRequest, ConfigHash: m.ConfigHash, Version: m.Version,
		Interval: time.Duration(m.Interval), Window: time.Duration(m.Window),
		PoolRequests: m.PoolRequests}
	for _, t := range m.Targets {
		out.Targets = append(out.Targets, report.Target{Name: t.Name, Role: t.Role, Engine: t.Engine, Model: t.Model})
	}
	for _, s := range m.Processes {
		out.Processes = append(out.Processes, report.Process{Start: s.Start, Stop: s.Stop, ConfigHash: s.ConfigHash})
	}
	for _, s := range m.TargetSets {
		ts := report.TargetSet{From: s.From, Targets: []string{}}
		for _, t := range s.Targets {
			ts.Targets = append(ts.Targets, t.Name)
		}
		out.TargetSets = append(out.TargetSets, ts)
	}
	for _, s := range m.Processes {
		out.Annotations = append(out.Annotations, report.Annotation{Time: s.Start, Text: "recording started"})
		if !s.Stop.IsZero() {
			out.Annotations = append(out.Annotations, report.Annotation{Time: s.Stop, Text: "recording stopped"})
		}
	}
	for _, a := range m.Annotations {
		out.Annotations = append(out.Annotations, report.Annotation{Time: a.Time, Text: a.Text})
	}
	if c, err := config.Parse([]byte(m.Config), record.MetaFile); err == nil {
		out.SLO = c.SLO
	}
	return out
}
