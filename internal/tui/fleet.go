package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Stages fetches /api/v1/snapshot without its instances and targets: the
// stage numbers and the verdict, the same size at 16 instances or 5,000.
func (c *Client) Stages(ctx context.Context) (*Snapshot, error) {
	var s Snapshot
	if err := c.get(ctx, "/api/v1/snapshot?instances=0", &s); err != nil {
		return &s, err
	}
	return &s, nil
}

// Instances fetches the worst limit instances of /api/v1/instances, with
// the group sums and the fleet's counts.
func (c *Client) Instances(ctx context.Context, limit int) (*api.InstanceTable, error) {
	limit = min(max(limit, 1), api.MaxInstanceLimit)
	var t api.InstanceTable
	if err := c.get(ctx, fmt.Sprintf("/api/v1/instances?limit=%d", limit), &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// maxGroupLines bounds the group summary when the height is limited.
const maxGroupLines = 8

// fleet writes the group summary lines, the fleet's counts and the worst
// instances, in at most left lines (0: no limit) when it can.
func fleet(w io.Writer, t *api.InstanceTable, win string, width, left int) {
	var b bytes.Buffer
	shown := t.Groups
	if left > 0 && len(shown) > maxGroupLines {
		shown = shown[:maxGroupLines]
	}
	nameW := 8
	for _, g := range shown {
		nameW = max(nameW, utf8.RuneCountInString(g.ID))
	}
	nameW = min(nameW, max(width-59, 8))
	fmt.Fprintf(&b, "\n%-*s %5s %5s %4s %5s %4s %9s %6s %6s %5s\n", nameW, "group", "inst", "up", "down", "stall", "flag", "req/s "+win, "wait", "run", "KVmax")
	for _, g := range shown {
		fmt.Fprintf(&b, "%-*s %5d %5d %4d %5d %4d %9s %6s %6s %5s\n", nameW, clip(g.ID, nameW), g.Instances, g.Up, g.Down, g.Stalled, g.Flagged,
			ptr(g.Window, "/s"), ptr(g.Waiting, ""), ptr(g.Running, ""), ptr(g.KVUsageMax, "%"))
	}
	if n := len(t.Groups) - len(shown); n > 0 {
		fmt.Fprintf(&b, "… %d more groups\n", n)
	}
	if left > 0 && lines(&b)+fleetMin(t, left) > left {
		b.Reset() // the groups only where the instances that need action fit too
	}
	head := lines(&b) + 4 // with the counts and the table head, each after a blank line
	rows := t.Rows
	if left > 0 {
		rows = fitRows(rows, max(left-head, 2))
	}
	c := t.Counts
	fmt.Fprintf(&b, "\n%d instances: %d down, %d stalled, %d queued, %d slow; %s\n", t.Total,
		c[api.StatusDown], c[api.StatusStalled], c[api.StatusQueued], c[api.StatusSlow], which(len(rows), t.Total))
	io.Copy(w, &b)

	ips := make([]ledger.InstancePoint, len(rows))
	kvs := make([]ledger.Num, len(rows))
	nameW = 8
	for i, r := range rows {
		if err := json.Unmarshal(r.Values, &ips[i]); err != nil {
			ips[i] = ledger.InstancePoint{Target: r.Name, Role: r.Role, Engine: r.Engine}
			markAbsent(&ips[i], "unreadable: "+err.Error())
		}
		kvs[i] = ips[i].KVBytesW
		nameW = max(nameW, utf8.RuneCountInString(r.Name))
	}
	nameW = min(nameW, 20)
	kv := byteColumn(kvs)
	instanceHead(w, nameW, "status", 7, win)
	var notes []string
	for i, r := range rows {
		status := r.Status
		if !r.Up {
			status = "DOWN"
		}
		instanceRow(w, nameW, &ips[i], status, 7, kv[i])
		if n := rowNote(&r); n != "" {
			notes = append(notes, r.Name+": "+n)
		}
	}
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// fitRows keeps the rows that fit in n lines, each with its note line.
func fitRows(rows []api.InstanceRow, n int) []api.InstanceRow {
	used := 0
	for i := range rows {
		need := 1
		if rowNote(&rows[i]) != "" {
			need = 2
		}
		if used+need > n && i > 0 {
			return rows[:i]
		}
		used += need
	}
	return rows
}

// rowNote is why a row stands out: its first flag, else why its rate is
// absent.
func rowNote(r *api.InstanceRow) string {
	if len(r.Flags) > 0 {
		return tidyErr(strings.TrimPrefix(r.Flags[0], "down: last scrape failed: "))
	}
	return r.Reasons["requests_per_second_window"]
}

func which(shown, total int) string {
	if shown >= total {
		return "all shown, worst first"
	}
	return fmt.Sprintf("the worst %d shown", shown)
}

func ptr(v *float64, unit string) string {
	if v == nil {
		return "—"
	}
	return humanize(*v, unit)
}

// markAbsent makes every value of ip absent for why.
func markAbsent(ip *ledger.InstancePoint, why string) {
	a := ledger.Absent(why)
	ip.Instant, ip.Window, ip.KVBytes, ip.KVBytesW, ip.Running, ip.Waiting = a, a, a, a, a, a
	ip.KVUsage, ip.PromptTPS, ip.GenTPS = a, a, a
}

// tableAllDown reports whether every instance is down, how many there
// are, and the first one's error.
func tableAllDown(t *api.InstanceTable) (bool, int, string) {
	if t.Total == 0 || t.Counts[api.StatusDown] != t.Total || len(t.Rows) == 0 {
		return false, 0, ""
	}
	return true, t.Total, t.Rows[0].Name + ": " + tidyErr(t.Rows[0].LastError)
}
