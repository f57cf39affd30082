package tui

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

var sparks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws vs (an absent value is drawn as a space) scaled to peak.
func sparkline(vs []ledger.Num, width int, peak float64) string {
	if len(vs) > width {
		vs = vs[len(vs)-width:]
	}
	var b strings.Builder
	for _, v := range vs {
		switch {
		case !v.OK() || math.IsNaN(v.V):
			b.WriteRune(' ')
		case peak <= 0:
			b.WriteRune(sparks[0])
		default:
			i := int(v.V / peak * float64(len(sparks)-1))
			i = min(max(i, 0), len(sparks)-1)
			b.WriteRune(sparks[i])
		}
	}
	return b.String()
}

// num formats a value, or "—" when absent.
func num(v ledger.Num, unit string) string {
	if !v.OK() {
		return "—"
	}
	return humanize(v.V, unit)
}

func humanize(v float64, unit string) string {
	switch unit {
	case "B", "B/s":
		return inUnit(v, byteUnit(v), unit == "B/s")
	case "%":
		return fmt.Sprintf("%.0f%%", v*100)
	case "":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

var byteSuffixes = []string{"B", "KiB", "MiB", "GiB", "TiB"}

// byteUnit is the power of 1024 to show v in, chosen after rounding to two
// decimals so that 1023.999 MiB reads 1.00 GiB, not 1024.00 MiB.
func byteUnit(v float64) int {
	i := 0
	for i < len(byteSuffixes)-1 && math.Round(math.Abs(v)/math.Pow(1024, float64(i))*100)/100 >= 1024 {
		i++
	}
	return i
}

func inUnit(v float64, unit int, perSec bool) string {
	s := byteSuffixes[unit]
	if perSec {
		s += "/s"
	}
	return fmt.Sprintf("%.2f %s", v/math.Pow(1024, float64(unit)), s)
}

// byteColumn formats values of one column in the unit of its largest, so
// that rows compare at a glance.
func byteColumn(vs []ledger.Num) []string {
	peak := 0.0
	for _, v := range vs {
		if v.OK() {
			peak = max(peak, math.Abs(v.V))
		}
	}
	u := byteUnit(peak)
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = "—"
		if v.OK() {
			out[i] = inUnit(v.V, u, true)
		}
	}
	return out
}

// MinWidth is the narrowest frame Render draws.
const MinWidth = 60

// Render writes one frame no wider than width columns. history holds the
// points before snap's, oldest first.
func Render(w io.Writer, snap *Snapshot, history []Tick, width int) {
	RenderFrame(w, snap, history, nil, width)
}

// RenderFrame is Render with the advice under the rates (none when adv is
// nil).
func RenderFrame(w io.Writer, snap *Snapshot, history []Tick, adv *AdviceResult, width int) {
	Draw(w, Frame{Snap: snap, History: history, Advice: adv}, width)
}

// Frame is what one frame shows.
type Frame struct {
	Snap    *Snapshot
	History []Tick // the points before Snap's, oldest first
	Advice  *AdviceResult
	// Table, when not nil, is /api/v1/instances: group lines and the
	// worst instances replace the snapshot's list of every instance.
	Table    *api.InstanceTable
	TableErr error
	// Height is the lines the frame may take (0: no limit); the table's
	// rows fill what the rest leaves.
	Height int
}

// Draw writes one frame no wider than width columns.
func Draw(w io.Writer, f Frame, width int) {
	width = max(width, MinWidth)
	var b bytes.Buffer
	render(&b, f, width)
	for line := range strings.Lines(b.String()) {
		io.WriteString(w, clip(strings.TrimSuffix(line, "\n"), width)+"\n")
	}
}

// stageView is what a frame shows of a stage, prefill, KV or decode alike.
type stageView struct {
	instant, window ledger.Num
	n, up           int
	missing         []string
}

// stageTitles are the stages as a frame's rows name them.
var stageTitles = map[stage.Stage]string{stage.Prefill: "Prefill", stage.KV: "KV", stage.Decode: "Decode"}

// stageViews returns the stages in pipeline order, that of stage.All.
func stageViews(p *ledger.Point) [3]stageView {
	return [3]stageView{
		{p.Prefill.Instant, p.Prefill.Window, p.Prefill.Instances, p.Prefill.Up, p.Prefill.Missing},
		{p.KV.Instant, p.KV.Window, p.KV.Instances, p.KV.Up, p.KV.Missing},
		{p.Decode.Instant, p.Decode.Window, p.Decode.Instances, p.Decode.Up, p.Decode.Missing},
	}
}

func render(w *bytes.Buffer, f Frame, width int) {
	snap, history, adv := f.Snap, f.History, f.Advice
	p := snap.Point
	win := fmt.Sprintf("%gs", snap.Window)
	var l layout
	head := l.add("", 0)
	fmt.Fprintf(head, "ptdmon  %s  window W=%s  B_request %s\n", snap.Time.Local().Format("15:04:05"), win, bReq(snap))
	if why := kvAbsent(snap); why != "" {
		fmt.Fprintln(head, "  KV req/s absent: "+why)
	}
	down, n, first := allDown(snap)
	if f.Table != nil {
		down, n, first = tableAllDown(f.Table)
	}
	if down {
		fmt.Fprintf(head, "ALL %d TARGETS DOWN\n", n)
		for _, l := range wrap(first, width-2) {
			fmt.Fprintf(head, "  %s\n", l)
		}
	}
	if h := scrapeHealth(snap.ScrapeHealth); h != "" {
		for i, l := range wrap(h, width-9) {
			lead := "SCRAPES  "
			if i > 0 {
				lead = "         "
			}
			fmt.Fprintln(head, lead+l)
		}
	}
	if p == nil {
		fmt.Fprintln(head, "\nno data yet: waiting for the first tick")
		l.write(w, f.Height, 0)
		return
	}
	if v := snap.Verdict; v != nil {
		fmt.Fprintf(head, "VERDICT  %s\n", v.Headline)
		// Balanced, the verdict names the stage that will limit first.
		if a := f.Advice; v.Class == diagnose.Balanced && a != nil && a.Advice != nil && a.Advice.Advice.LimitsFirst.Stage != "" {
			for _, l := range wrap("next limit: "+a.Advice.Advice.LimitsFirst.Text, width-11) {
				fmt.Fprintf(head, "         · %s\n", l)
			}
		}
		ev := l.add("evidence", prioEvidence)
		for _, e := range v.Evidence {
			for i, l := range wrap(e, width-11) {
				lead := "         · "
				if i > 0 {
					lead = "           "
				}
				fmt.Fprintf(ev, "%s%s\n", lead, l)
			}
		}
	}
	rates(l.add("rates", prioRates), snap, history, win, width)
	pools(l.add("pools", prioPools), snap, win, width)
	failures(l.add("failures", prioFailures), snap, width)
	phases(l.add("phases", prioPhases), snap, width)
	if adv != nil {
		a := l.add("advice", prioAdvice)
		fmt.Fprintln(a)
		renderAdvice(a, adv.Advice, adv.Err, width, snap.Verdict != nil && snap.Verdict.Class == diagnose.Balanced)
	}
	queues(l.add("queues", prioQueues), p, win)
	switch {
	case f.TableErr != nil:
		fmt.Fprintf(l.add("instances", prioAdvice), "\ninstances: %v\n", f.TableErr)
	case f.Table == nil:
		instances(l.add("instances", prioInstances), snap, win)
	}
	left := l.write(w, f.Height, fleetMin(f.Table, f.Height))
	if f.TableErr == nil && f.Table != nil {
		fleet(w, f.Table, win, width, left)
	}
}

// rates writes the stages' req/s with their sparklines, the verdict strip
// and why a stage's rate is absent or partial.
func rates(w *bytes.Buffer, snap *Snapshot, history []Tick, win string, width int) {
	spark := width - 36
	var series [3][]ledger.Num
	peak := 0.0
	for j := range history {
		for i, st := range stageViews(&history[j].Point) {
			series[i] = append(series[i], st.window)
		}
	}
	now := stageViews(snap.Point)
	for i, st := range now {
		series[i] = append(series[i], st.window)
		if len(series[i]) > spark {
			series[i] = series[i][len(series[i])-spark:]
		}
		for _, v := range series[i] {
			if v.OK() && v.V > peak {
				peak = v.V
			}
		}
	}
	ticks := len(series[0])
	fmt.Fprintf(w, "\n%-8s %11s %11s  %s\n", "req/s", "instant", win+" window", fmt.Sprintf("%s rate, last %d ticks", win, ticks))
	var reasons []string
	for i, s := range now {
		name := stageTitles[stage.All[i]]
		fmt.Fprintf(w, "%-8s %11s %11s  %s\n", name, num(s.instant, "/s"), num(s.window, "/s"), sparkline(series[i], spark, peak))
		if !s.window.OK() {
			reasons = append(reasons, fmt.Sprintf("%s absent: %s", name, s.window.Why))
		} else if len(s.missing) > 0 {
			reasons = append(reasons, fmt.Sprintf("%s partial: %d of %d up, missing %s", name, s.up, s.n, strings.Join(s.missing, ", ")))
		}
	}
	if v := snap.Verdict; v != nil && len(history) > 0 {
		classes := make([]diagnose.Class, 0, len(history)+1)
		for _, q := range history {
			classes = append(classes, q.Verdict)
		}
		classes = append(classes, v.Class)
		fmt.Fprintf(w, "%-9s %25s  %s\n", "Verdict", "P K A D · M", verdictStrip(classes, spark))
	}
	for _, r := range reasons {
		fmt.Fprintf(w, "  %s\n", r)
	}
}

// queues writes the KV bytes/s and the stages' queues and KV usage.
func queues(w *bytes.Buffer, p *ledger.Point, win string) {
	kv := byteColumn([]ledger.Num{p.KV.BytesInstant, p.KV.BytesWindow})
	fmt.Fprintf(w, "\nKV bytes/s  instant %s  %s window %s\n", kv[0], win, kv[1])
	fmt.Fprintf(w, "Prefill  running %s  waiting %s  bootstrap %s  inflight %s  KV usage %s\n",
		num(p.Prefill.Running, ""), num(p.Prefill.Waiting, ""), num(p.Prefill.Queues.Bootstrap, ""), num(p.Prefill.Queues.Inflight, ""), num(p.Prefill.KVUsage, "%"))
	fmt.Fprintf(w, "Decode   running %s  waiting %s  prealloc %s  transfer %s  KV usage %s\n",
		num(p.Decode.Running, ""), num(p.Decode.Waiting, ""), num(p.Decode.Queues.Prealloc, ""), num(p.Decode.Queues.Transfer, ""), num(p.Decode.KVUsage, "%"))
}

// scrapeHealth says what the scrapes went through since the start, "" when
// no scrape failed and no target restarted: failed scrapes by reason and
// the targets that restarted, which need a look as a down instance does.
func scrapeHealth(h ledger.ScrapeHealth) string {
	var n uint64
	reasons := make([]string, 0, len(h.Failures))
	for r, c := range h.Failures {
		n += c
		reasons = append(reasons, fmt.Sprintf("%s %d", r, c))
	}
	sort.Strings(reasons)
	var parts []string
	if n > 0 {
		parts = append(parts, fmt.Sprintf("%d failed on %d target(s) (%s)", n, h.TargetsFailed, strings.Join(reasons, ", ")))
	}
	if len(h.Restarted) > 0 {
		parts = append(parts, "restarted: "+strings.Join(h.Restarted, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + " since the start"
}

// instances writes the per-instance table; notes (errors, absences) go on
// lines of their own under it, where they have the whole width.
func instances(w io.Writer, snap *Snapshot, win string) {
	p := snap.Point
	errs := map[string]string{}
	for _, t := range snap.Targets {
		errs[t.Name] = t.LastError
	}
	nameW := 8
	kvs := make([]ledger.Num, len(p.Instances))
	for i, in := range p.Instances {
		nameW = max(nameW, utf8.RuneCountInString(in.Target))
		kvs[i] = in.KVBytesW
	}
	nameW = min(nameW, 20)
	kv := byteColumn(kvs)
	instanceHead(w, nameW, "up", 4, win)
	var notes []string
	for i, in := range p.Instances {
		up := "up"
		note := ""
		if !in.Up {
			up = "DOWN"
			note = tidyErr(errs[in.Target])
		} else if !in.Window.OK() {
			note = in.Window.Why
		}
		if note != "" {
			notes = append(notes, in.Target+": "+note)
		}
		instanceRow(w, nameW, &in, up, 4, kv[i])
	}
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// instanceHead and instanceRow write the instance table: state is "up" or
// a status, in a column stateW wide.
func instanceHead(w io.Writer, nameW int, state string, stateW int, win string) {
	fmt.Fprintf(w, "\n%-*s %-7s %-6s %-*s %8s %12s %5s %5s\n", nameW, "instance", "role", "engine", stateW, state, "req/s "+win, "KV B/s "+win, "run", "wait")
}

func instanceRow(w io.Writer, nameW int, in *ledger.InstancePoint, state string, stateW int, kv string) {
	fmt.Fprintf(w, "%-*s %-7s %-6s %-*s %8s %12s %5s %5s\n", nameW, clip(in.Target, nameW), in.Role, in.Engine, stateW, state,
		num(in.Window, "/s"), kv, num(in.Running, ""), num(in.Waiting, ""))
}

// allDown reports whether every target is down, how many there are, and
// the first one's error.
func allDown(s *Snapshot) (bool, int, string) {
	if len(s.Targets) == 0 {
		return false, 0, ""
	}
	for _, t := range s.Targets {
		if t.Up {
			return false, 0, ""
		}
	}
	return true, len(s.Targets), s.Targets[0].Name + ": " + tidyErr(s.Targets[0].LastError)
}

// repeatedGet is net/http's "Get "URL": " inside an error that already
// begins with "GET URL: ".
var repeatedGet = regexp.MustCompile(`^(GET (\S+): )Get "[^"]*": `)

// tidyErr says a scrape error's URL once.
func tidyErr(s string) string { return repeatedGet.ReplaceAllString(s, "$1") }

func bReq(s *Snapshot) string {
	if s.KVRequest.Bytes <= 0 {
		return "not configured"
	}
	return humanize(float64(s.KVRequest.Bytes), "B") + " (" + s.KVRequest.Basis + ")"
}

// wrap breaks s at spaces into lines of at most n columns (a longer word
// is left to clip).
func wrap(s string, n int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= n:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
	}
	return append(out, line)
}

// clip keeps the first n columns of s, ending in "…" when it cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
