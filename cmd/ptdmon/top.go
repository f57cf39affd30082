package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/tui"
)

func init() {
	register("top", "terminal view of a running ptdmon (serve or demo)", runTop)
}

func runTop(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://"+config.DefaultListen, "address of a running ptdmon serve or demo")
	every := fs.Duration("interval", time.Second, "refresh interval")
	once := fs.Bool("once", false, "print one frame and exit (no screen control)")
	width := fs.Int("width", termWidth(), "terminal width in columns")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := runContext(0)
	defer stop()
	c := &tui.Client{Base: *url, HTTP: &http.Client{Timeout: 5 * time.Second}}
	history, err := c.History(ctx, time.Time{})
	if err != nil {
		fmt.Fprintf(stderr, "ptdmon top: %v (is ptdmon serve running at %s?)\n", err, *url)
		return 1
	}
	tk := time.NewTicker(*every)
	defer tk.Stop()
	var frame bytes.Buffer
	for {
		snap, err := c.Snapshot(ctx)
		frame.Reset()
		if !*once {
			frame.WriteString("\x1b[H\x1b[2J")
		}
		if err != nil {
			if *once {
				fmt.Fprintln(stderr, "ptdmon top:", err)
				return 1
			}
			fmt.Fprintf(&frame, "ptdmon top: %v (retrying)\n", err)
		} else {
			if snap.Point != nil && len(history) > 0 && !history[len(history)-1].Time.Before(snap.Point.Time) {
				history = history[:len(history)-1]
			}
			tui.Render(&frame, snap, history, *width)
			if snap.Point != nil {
				history = append(history, *snap.Point)
				if len(history) > 600 {
					history = history[len(history)-600:]
				}
			}
		}
		stdout.Write(frame.Bytes())
		if *once {
			return 0
		}
		select {
		case <-ctx.Done():
			return 0
		case <-tk.C:
		}
	}
}

func termWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 120
}
