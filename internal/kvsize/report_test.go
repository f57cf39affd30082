package kvsize

import (
	"strings"
	"testing"
)

// TestReportRuleTags: every rule tag the result cites is listed once, in
// rule order, with its section of docs/kvbytes.md.
func TestReportRuleTags(t *testing.T) {
	r := Result{
		Rules:    []string{"head_dim absent (R3)", "window (R8, R9)", "again (R3)"},
		Defaults: []string{"class default (R12)"},
		Warnings: []string{"no tag here; R is not a tag, nor is R1x"},
	}
	if got := strings.Join(ruleTags(r), " "); got != "R3 R8 R9 R12" {
		t.Errorf("tags %q, want R3 R8 R9 R12", got)
	}
	out := Report("config.json", r)
	for _, want := range []string{"  R3   docs/kvbytes.md#r3\n", "  R12  docs/kvbytes.md#r12\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(Report("config.json", Result{}), "rule tags") {
		t.Error("a result without tags lists rule tags")
	}
}
