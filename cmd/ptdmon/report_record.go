package main

import (
	"errors"
	"fmt"
	"io/fs"
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
	return report.Input{Meta: reportMeta(run.Meta()), Points: pts}, nil
}

// reportMeta is the recording's description in the report's terms; the
// SLO thresholds are those of the recorded configuration.
func reportMeta(m record.Meta) report.Meta {
	out := report.Meta{BRequest: m.KVRequest, ConfigHash: m.ConfigHash, Version: m.Version,
		Interval: time.Duration(m.Interval), Window: time.Duration(m.Window)}
	for _, t := range m.Targets {
		out.Targets = append(out.Targets, report.Target{Name: t.Name, Role: t.Role, Engine: t.Engine, Model: t.Model})
	}
	for _, s := range m.Sessions {
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
