package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/tui"
)

func init() {
	register("top", "terminal view of a running ptdmon (serve or demo)", runTop)
}

func runTop(args []string, stdout, stderr io.Writer) int {
	c := cli.New("top", "[flags]",
		"Shows a running ptdmon serve or demo in the terminal, redrawn every interval; q quits.",
		cli.NoArgs, stdout, stderr)
	fs := c.Flags
	base := fs.String("url", config.DefaultListen, "address of a running ptdmon serve or demo: host:port or http://host:port")
	every := fs.Duration("interval", time.Second, "refresh interval")
	once := fs.Bool("once", false, "print one frame and exit (no screen control)")
	width := fs.Int("width", 0, "width in columns (default: the terminal's, else $COLUMNS, else 80)")
	return c.Run(args, func([]string) error {
		u, err := tui.BaseURL(*base)
		if err != nil {
			return cli.Usagef("-url %s: %w", *base, err)
		}
		if *every <= 0 {
			return cli.Usagef("-interval must be > 0")
		}
		ctx, stop := runContext(0)
		defer stop()
		cl := &tui.Client{Base: u, HTTP: &http.Client{Timeout: 5 * time.Second}}
		history, err := cl.History(ctx, time.Time{})
		if err != nil {
			return fmt.Errorf("%w (is ptdmon serve or demo running at %s?)", err, u)
		}
		out, _ := stdout.(*os.File)
		var scr *tui.Screen
		if !*once && out != nil && tui.IsTerminal(out) {
			if scr, err = tui.OpenScreen(os.Stdin, out); err != nil {
				return err
			}
			defer scr.Close()
		}
		cols := func() int {
			switch {
			case *width > 0:
				return *width
			case out != nil && tui.IsTerminal(out):
				w, _ := tui.Size(out)
				return w
			}
			return envColumns()
		}
		tk := time.NewTicker(*every)
		defer tk.Stop()
		var frame bytes.Buffer
		for {
			snap, err := cl.Snapshot(ctx)
			frame.Reset()
			switch {
			case err != nil && *once:
				return err
			case err != nil:
				fmt.Fprintf(&frame, "ptdmon top: %v (retrying every %v)\n", err, *every)
			default:
				if snap.Point != nil && len(history) > 0 && !history[len(history)-1].Time.Before(snap.Point.Time) {
					history = history[:len(history)-1]
				}
				tui.Render(&frame, snap, history, cols())
				if snap.Point != nil {
					history = append(history, *snap.Point)
					if len(history) > 600 {
						history = history[len(history)-600:]
					}
				}
			}
			if scr != nil {
				scr.Draw(frame.Bytes())
			} else {
				if !*once {
					frame.WriteString("\n")
				}
				stdout.Write(frame.Bytes())
			}
			if *once {
				return nil
			}
			var quit <-chan struct{}
			if scr != nil {
				quit = scr.Quit
			}
			select {
			case <-ctx.Done():
				return nil
			case <-quit:
				return nil
			case <-tk.C:
			}
		}
	})
}

// envColumns is $COLUMNS, else 80: the width when stdout is not a terminal.
func envColumns() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("COLUMNS"), &n); err == nil && n > 0 {
		return n
	}
	return 80
}
