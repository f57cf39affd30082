package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
)

// Options configure Run.
type Options struct {
	Client   *Client
	Out      io.Writer // a terminal gets screen control; anything else gets frames one after another
	In       *os.File  // read for q when Out is a terminal; may be nil
	Interval time.Duration
	Once     bool // one frame, no screen control
	Width    int  // 0: the terminal's, else $COLUMNS, else 80
	Height   int  // 0: the terminal's, else $LINES, else no limit
}

// historyLen is how many points the sparklines keep.
const historyLen = 600

// Run draws a frame every interval until ctx ends or q is pressed. A
// failed first read is an error (nothing to show); later failures are
// drawn in the frame and retried.
func Run(ctx context.Context, o Options) error {
	history, err := o.Client.History(ctx, time.Time{})
	if err != nil {
		return fmt.Errorf("%w (is ptdmon serve or demo running at %s?)", err, redacted(o.Client.Base))
	}
	out, _ := o.Out.(*os.File)
	tty := out != nil && IsTerminal(out)
	var scr *Screen
	if !o.Once && tty {
		if scr, err = OpenScreen(o.In, out); err != nil {
			return err
		}
		defer scr.Close()
	}
	// size is the frame's width and height: the flags', else the
	// terminal's, else $COLUMNS and $LINES, else 80 columns and no limit
	// on the lines (a file or a pipe scrolls).
	size := func() (w, h int) {
		w, h = envInt("COLUMNS", 80), envInt("LINES", 0)
		if tty {
			w, h = Size(out)
		}
		if o.Width > 0 {
			w = o.Width
		}
		if o.Height > 0 {
			h = o.Height
		}
		return w, h
	}
	tk := time.NewTicker(o.Interval)
	defer tk.Stop()
	var frame bytes.Buffer
	for {
		// The stages without the instances, and only the instances that
		// fit on the screen: a refresh costs the same at 16 instances or
		// 5,000.
		snap, err := o.Client.Stages(ctx)
		frame.Reset()
		switch {
		case err != nil && o.Once:
			return err
		case err != nil:
			fmt.Fprintf(&frame, "ptdmon top: %v (retrying every %v)\n", err, o.Interval)
		default:
			history = advance(history, snap)
			past := history // the points before the snapshot's
			if snap.Point != nil {
				past = history[:len(history)-1]
			}
			a, aerr := o.Client.Advice(ctx)
			w, h := size()
			rows := h // at most one a line
			if h <= 0 {
				rows = api.DefaultInstanceLimit
			}
			t, terr := o.Client.Instances(ctx, rows)
			Draw(&frame, Frame{Snap: snap, History: past, Advice: &AdviceResult{a, aerr}, Table: t, TableErr: terr, Height: h}, w)
		}
		if scr != nil {
			scr.Draw(frame.Bytes())
		} else {
			if !o.Once {
				frame.WriteString("\n")
			}
			o.Out.Write(frame.Bytes())
		}
		if o.Once {
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
}

// advance appends the snapshot's point to the history (replacing a point
// at the same time or later, fetched twice), keeping the newest historyLen.
func advance(history []Tick, snap *Snapshot) []Tick {
	if snap.Point == nil {
		return history
	}
	for len(history) > 0 && !history[len(history)-1].Time.Before(snap.Point.Time) {
		history = history[:len(history)-1]
	}
	tick := Tick{Point: *snap.Point}
	if snap.Verdict != nil {
		tick.Verdict = snap.Verdict.Class // kept when the point joins the history
	}
	history = append(history, tick)
	if len(history) > historyLen {
		history = history[len(history)-historyLen:]
	}
	return history
}

// envInt is $name when it is a positive integer, else def: the width
// ($COLUMNS) and height ($LINES) when stdout is not a terminal.
func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err == nil && n > 0 {
		return n
	}
	return def
}
