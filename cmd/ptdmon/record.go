package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/service"
)

func init() {
	register("record", "run a load generator and record the deployment while it runs", runRecord)
}

// recordRun is what runRecord starts the command with; tests replace it.
var recordRun = func(ctx context.Context, name string, args []string, stdout, stderr io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	return cmd
}

func runRecord(args []string, stdout, stderr io.Writer) int {
	c := cli.New("record", "[flags] -o DIR -- CMD ARGS...",
		"Watches the targets as serve does, runs CMD (vllm bench serve, aiperf, guidellm, genai-perf, ...),\n"+
			"records the run in DIR with CMD's start and end marked, and exits with CMD's exit status.\n"+
			"DIR then opens with ptdmon replay and ptdmon report.",
		cli.NoArgs, stdout, stderr)
	c.LogLevel(slog.LevelWarn)
	fs := c.Flags
	out := fs.String("o", "", "directory of the recording (required)")
	fs.StringVar(out, "out", "", "same as -o, as gen spells it")
	cfgPath := fs.String("config", "", "ptdmon.yaml")
	benchResults := fs.String("bench-results", "", "the load generator's result file, or a directory it writes into (default: found by its output flags, docs/bench.md)")
	settle := fs.Duration("settle", 2*time.Second, "keep recording this long before and after CMD, for the rates around its start and end")
	sizing := defineRuntimeFlags(fs)
	fl := config.NewFlags(fs)
	targetFlags(fs, fl)
	listen := cli.HostPort(fs, "listen", "", "also serve the web UI and API here while recording (default 127.0.0.1:0, a free port)")
	fl.StringVar(listen, "listen", func(c *config.Config) *string { return &c.Listen })
	model := modelFlags(fl, "")
	adviceFlags(fl)
	// The load generator's command line is everything after "--", its
	// flags included.
	var pos []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, pos = args[:i], args[i+1:]
	}
	status := 0
	code := c.Run(args, func([]string) error {
		if err := leftOut(); err != nil {
			return err
		}
		if len(pos) == 0 {
			return cli.Usagef("missing the command to run: -- CMD ARGS...")
		}
		if *out == "" {
			return cli.Usagef("-o DIR is required")
		}
		if err := model.check(); err != nil {
			return err
		}
		cfg := &config.Config{}
		if *cfgPath != "" {
			var err error
			if cfg, err = config.Load(*cfgPath); err != nil {
				return cli.Usage(err)
			}
		}
		fl.Apply(cfg)
		cfg.Record.Dir = *out
		if cfg.Listen == "" {
			cfg.Listen = "127.0.0.1:0"
		}
		kv, pools, err := settleConfig(cfg, model.kvGiven())
		if err != nil {
			return err
		}
		log := c.Logger()
		rec, err := service.OpenRecorder(cfg, kv, pools, log)
		if err != nil {
			return err
		}
		defer rec.Close()

		ctx, stop := runContext(0)
		defer stop()
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ready := make(chan string, 1)
		served := make(chan error, 1)
		opts := service.Options{KVRequest: kv, PoolRequests: pools, Logger: log, Recorder: rec,
			Ready: func(addr string) { ready <- addr }}
		sizing.set(&opts)
		go func() { served <- service.Run(sctx, cfg, opts) }()
		select {
		case addr := <-ready:
			// file_sd's targets too, as serve resolved them at its start.
			n := len(cfg.Targets)
			if ts, err := service.Targets(cfg); err == nil {
				n = len(ts)
			}
			fmt.Fprintf(stderr, "ptdmon record: watching %d targets, live view on http://%s/\n", n, addr)
		case err := <-served:
			return err
		}
		if !sleepCtx(ctx, *settle) {
			cancel()
			return <-served
		}

		cmd := recordRun(ctx, pos[0], pos[1:], stdout, stderr)
		line := strings.Join(pos, " ")
		start := time.Now()
		if err := rec.Annotate(start, "start: "+line); err != nil {
			log.Warn("annotation not recorded", "err", err)
		}
		runErr := cmd.Run()
		end := time.Now()
		status = exitStatus(runErr)
		if err := rec.Annotate(end, fmt.Sprintf("end: %s (exit status %d)", line, status)); err != nil {
			log.Warn("annotation not recorded", "err", err)
		}
		sleepCtx(ctx, *settle)
		cancel()
		if err := <-served; err != nil {
			return err
		}
		if err := rec.Close(); err != nil {
			return err
		}
		keepBench(stderr, *out, *benchResults, pos, start)
		fmt.Fprintf(stderr, "ptdmon record: %s ran %s (exit status %d); the recording is in %s\n",
			pos[0], end.Sub(start).Round(time.Second), status, *out)
		fmt.Fprintf(stderr, "ptdmon record: report on it with: ptdmon report %s\n", *out)
		var notFound *exec.Error
		if errors.As(runErr, &notFound) {
			return fmt.Errorf("run %s: %w", pos[0], runErr)
		}
		return nil
	})
	if code != cli.ExitOK {
		return code
	}
	return status
}

// exitStatus is the process's exit status: 0, its code, 128+signal when
// killed (as a shell says it), 127 when it could not start.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code >= 0 {
			return code
		}
		return 128 + signalOf(ee)
	}
	return 127
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// signalOf is the signal that ended the process of ee (0 if none).
func signalOf(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
