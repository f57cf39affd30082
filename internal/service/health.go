package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// allDownEvery is how often "every target is down" is repeated on stderr
// while it lasts: often enough to be seen, rare enough not to flood.
const allDownEvery = 30 * time.Second

// downWatch decides when to log that every target is down: on the tick it
// starts, every `every` while it lasts, and once when a target comes back.
type downWatch struct {
	every time.Duration
	since time.Time // zero: not all down
	said  time.Time
}

// observe returns the log record to write for the statuses at now, if any.
func (d *downWatch) observe(now time.Time, sts []ledger.TargetStatus) (slog.Level, string, []any, bool) {
	up := 0
	for _, s := range sts {
		if s.Up {
			up++
		}
	}
	allDown := len(sts) > 0 && up == 0
	switch {
	case allDown && d.since.IsZero():
		d.since, d.said = now, now
		return slog.LevelWarn, "every target is down: no rate can be computed", []any{"targets", len(sts), "first", sts[0].Name, "err", sts[0].LastError}, true
	case allDown && now.Sub(d.said) >= d.every:
		d.said = now
		return slog.LevelWarn, "every target is still down", []any{"targets", len(sts), "for", now.Sub(d.since).Round(time.Second), "first", sts[0].Name, "err", sts[0].LastError}, true
	case !allDown && !d.since.IsZero():
		d.since = time.Time{}
		return slog.LevelInfo, "targets are up again", []any{"up", up, "targets", len(sts)}, true
	}
	return 0, "", nil, false
}

// watchHealth logs, throttled, while every target is down: otherwise a
// serve pointed at the wrong addresses says nothing after its start line.
func watchHealth(ctx context.Context, l *ledger.Ledger, log *slog.Logger) {
	points, cancel := l.Subscribe()
	defer cancel()
	d := &downWatch{every: allDownEvery}
	for {
		select {
		case <-ctx.Done():
			return
		case p, ok := <-points:
			if !ok {
				return
			}
			if lv, msg, attrs, ok := d.observe(p.Time, l.Targets(p.Time)); ok {
				log.Log(ctx, lv, msg, attrs...)
			}
		}
	}
}
