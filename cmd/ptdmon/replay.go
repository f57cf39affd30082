package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"strconv"
	"time"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/record"
	"github.com/ptdmon/ptdmon/internal/service"
)

func init() {
	register("replay", "serve the web UI, the API and top from a recording", runReplay)
}

func runReplay(args []string, stdout, stderr io.Writer) int {
	c := cli.New("replay", "[flags] DIR",
		"Serves a recording (serve -record, demo -record, ptdmon record) as serve serves a live run:\n"+
			"the web UI, the JSON API, /metrics and top, with the verdicts it gave live.\n"+
			"Times are RFC 3339, Unix seconds, or a duration from the run's start (10m).",
		cli.OneArg, stdout, stderr)
	c.LogLevel(slog.LevelInfo)
	fs := c.Flags
	listen := cli.HostPort(fs, "listen", config.DefaultListen, "address to serve on, host:port")
	speed := fs.Float64("speed", 0, "recorded seconds per second; 0 serves the whole span at once")
	fromFlag := fs.String("from", "", "start of the span (default: the run's start)")
	toFlag := fs.String("to", "", "end of the span (default: the run's end)")
	return c.Run(args, func(pos []string) error {
		if *speed < 0 {
			return cli.Usagef("-speed %v must be ≥ 0", *speed)
		}
		if err := leftOut(); err != nil {
			return err
		}
		run, err := record.Open(pos[0])
		if errors.Is(err, iofs.ErrNotExist) {
			return cli.Usage(err) // not a recording: as report says it
		}
		if err != nil {
			return err
		}
		defer run.Close()
		for _, l := range run.Lost() {
			c.Logger().Warn("part of the recording could not be read; replaying the rest", "lost", l.String())
		}
		start, _, err := run.Span()
		if err != nil {
			return fmt.Errorf("%s: %w", pos[0], err)
		}
		from, err := runTime("-from", *fromFlag, start)
		if err != nil {
			return err
		}
		to, err := runTime("-to", *toFlag, start)
		if err != nil {
			return err
		}
		if !from.IsZero() && !to.IsZero() && !to.After(from) {
			return cli.Usagef("-to %s is not after -from %s", *toFlag, *fromFlag)
		}
		ctx, stop := serveContext()
		defer stop()
		return service.Replay(ctx, run, service.ReplayOptions{
			Listen: *listen, Speed: *speed, From: from, To: to, Logger: c.Logger(),
			Ready: func(addr string) { fmt.Fprintf(stdout, "ptdmon: replaying %s on http://%s/\n", pos[0], addr) },
		})
	})
}

// runTime reads a time of a run: RFC 3339, Unix seconds, or a duration
// from its start; empty is the zero time.
func runTime(flag, s string, start time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return start.Add(d), nil
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Unix(0, int64(secs*1e9)), nil
	}
	return time.Time{}, cli.Usagef("%s %q: want RFC 3339 (2026-03-01T12:00:00Z), Unix seconds or a duration from the run's start (10m)", flag, s)
}
