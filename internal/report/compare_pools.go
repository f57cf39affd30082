package report

import (
	"fmt"
	"sort"
)

// PoolDiff is one pool served in both runs of a comparison: its stages
// and its verdict, as the deployment's are compared.
type PoolDiff struct {
	Name    string      `json:"name"`
	Stages  StageDiffs  `json:"stages"`
	Verdict VerdictDiff `json:"verdict"`
}

// poolDiffs compares the pools of a and b by name, in name order, and
// names the pools only one of them served.
func poolDiffs(a, b *Report) (diffs []PoolDiff, onlyA, onlyB []string) {
	inB := map[string]*Pool{}
	for i := range b.Pools {
		inB[b.Pools[i].Name] = &b.Pools[i]
	}
	seen := map[string]bool{}
	for i := range a.Pools {
		pa := &a.Pools[i]
		seen[pa.Name] = true
		pb, ok := inB[pa.Name]
		if !ok {
			onlyA = append(onlyA, pa.Name)
			continue
		}
		diffs = append(diffs, PoolDiff{Name: pa.Name, Stages: stageDiffs(pa.Stages, pb.Stages), Verdict: verdictDiff(pa.Verdict, pb.Verdict)})
	}
	for _, p := range b.Pools {
		if !seen[p.Name] {
			onlyB = append(onlyB, p.Name)
		}
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].Name < diffs[j].Name })
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return diffs, onlyA, onlyB
}

// StageList is the pool's stages in pipeline order, as the comparison's
// tables list them.
func (d *PoolDiff) StageList() []namedDiff { return d.Stages.list() }

// stageTable writes the Markdown table of stages ss through p.
func stageTable(p func(string, ...any), ss []namedDiff) {
	p("| stage | A req/s | B req/s | B − A | relative | beyond noise | A capacity | B capacity |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range ss {
		rel := "–"
		if s.D.Relative != nil {
			rel = fmt.Sprintf("%+.1f%%", 100**s.D.Relative)
		}
		var sig string
		switch {
		case s.D.Welch == nil:
			sig = "– (" + s.D.Absent + ")"
		case s.D.Significant:
			sig = fmt.Sprintf("yes (Welch t = %.2f, df = %.1f)", s.D.Welch.T, s.D.Welch.DF)
		default:
			sig = fmt.Sprintf("no (Welch t = %.2f, df = %.1f)", s.D.Welch.T, s.D.Welch.DF)
		}
		diff := "–"
		if s.D.Diff != nil {
			diff = fmt.Sprintf("%+.3g", *s.D.Diff)
		}
		p("| %s | %s %s | %s %s | %s | %s | %s | %s | %s |\n", s.Name,
			num(s.D.RequestsPerSecond[0], ""), ci(s.D.CI95[0]), num(s.D.RequestsPerSecond[1], ""), ci(s.D.CI95[1]),
			diff, rel, sig, num(s.D.Capacity[0], ""), num(s.D.Capacity[1], ""))
	}
}
