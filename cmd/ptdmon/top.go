package main

import (
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
	height := fs.Int("height", 0, "height in lines, which sets how many instances are listed (default: the terminal's, else $LINES; not a terminal: the worst 50)")
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
		return tui.Run(ctx, tui.Options{
			Client:   &tui.Client{Base: u, HTTP: &http.Client{Timeout: 5 * time.Second}},
			Out:      stdout,
			In:       os.Stdin,
			Interval: *every,
			Once:     *once,
			Width:    *width,
			Height:   *height,
		})
	})
}
