package kvsize

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Report renders a Result for people: the figure first, then what it is
// made of and why, so a surprising number can be checked line by line.
func Report(path string, r Result) string {
	var b strings.Builder
	in := r.Inputs
	model := in.ModelType
	if model == "" {
		model = "unknown model_type"
	}
	if len(in.Architectures) > 0 {
		model += ", " + strings.Join(in.Architectures, ", ")
	}
	fmt.Fprintf(&b, "model config     %s (%s)\n", path, model)
	if in.ConfigSection != "" {
		fmt.Fprintf(&b, "attention from   %s\n", in.ConfigSection)
	}
	fmt.Fprintf(&b, "sequence length  %d tokens\n", in.SeqLen)
	fmt.Fprintf(&b, "kv dtype         %s → %s, %d B/element\n", in.KVDtype, in.ResolvedDtype, r.ElementBytes)
	fmt.Fprintf(&b, "window mode      %s\n", in.WindowMode)
	fmt.Fprintf(&b, "\nper-token bytes  %s\n", kvBytes(r.PerTokenBytes))
	if r.StateBytesPerRequest > 0 {
		fmt.Fprintf(&b, "fixed state      %s per request\n", kvBytes(r.StateBytesPerRequest))
	}
	fmt.Fprintf(&b, "B_request        %s\n", kvBytes(r.BytesPerRequest))

	fmt.Fprintf(&b, "\nlayers\n")
	for _, g := range r.Groups {
		fmt.Fprintf(&b, "  %s\n", kvGroupLine(g))
	}

	fmt.Fprintf(&b, "\ntensor parallel  tp %d, attention tp %d", r.TP.Size, r.TP.AttentionTP)
	if r.TP.KVHeads > 0 {
		fmt.Fprintf(&b, ", %d KV heads → %d per rank", r.TP.KVHeads, r.TP.KVHeadsPerRank)
	}
	fmt.Fprintf(&b, ", replication R = %d\n", r.TP.Replication)
	fmt.Fprintf(&b, "TP wire factor   %.4g: a byte counter summed over all ranks sees %s per request\n", r.TPWireFactor, kvBytes(r.WireBytesPerRequest))
	fmt.Fprintf(&b, "per rank         %s per request\n", kvBytes(r.PerRankBytesPerRequest))

	kvList(&b, "rules applied", r.Rules)
	kvList(&b, "class defaults used", r.Defaults)
	if len(r.Warnings) > 0 {
		kvList(&b, "warnings", r.Warnings)
	}
	if tags := ruleTags(r); len(tags) > 0 {
		fmt.Fprintf(&b, "\nrule tags (what each rule says and why)\n")
		for _, t := range tags {
			fmt.Fprintf(&b, "  %-4s %s\n", t, RuleDoc(t))
		}
	}
	return b.String()
}

func kvGroupLine(g LayerGroup) string {
	kind := strings.ReplaceAll(g.Type, "_", " ")
	if g.Window > 0 {
		kind += fmt.Sprintf(" (window %d)", g.Window)
	}
	if g.MTP {
		kind += " (MTP draft)"
	}
	if g.Type == LayerLinear {
		return fmt.Sprintf("%d × %s, fixed state %s per layer → %s", g.Count, kind, kvBytes(g.StateBytes), kvBytes(g.Bytes))
	}
	return fmt.Sprintf("%d × %s, %d tokens, %s/token per layer, %s per layer → %s",
		g.Count, kind, g.TokensHeld, kvBytes(g.BytesPerToken), kvBytes(g.BytesPerLayer), kvBytes(g.Bytes))
}

func kvList(b *strings.Builder, title string, items []string) {
	fmt.Fprintf(b, "\n%s\n", title)
	if len(items) == 0 {
		fmt.Fprintf(b, "  none\n")
	}
	for _, s := range items {
		fmt.Fprintf(b, "  - %s\n", s)
	}
}

// kvBytes prints the exact count with thousands separators, and the
// binary unit next to it because people reason in GiB but compare in bytes.
func kvBytes(n int64) string {
	exact := kvThousands(n) + " B"
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%s (%.3f GiB)", exact, float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%s (%.1f MiB)", exact, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%s (%.1f KiB)", exact, float64(n)/(1<<10))
	}
	return exact
}

func kvThousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

var ruleTag = regexp.MustCompile(`\bR([0-9]+)\b`)

// ruleTags lists the rule tags ("R3") the result's lines cite, in rule order.
func ruleTags(r Result) []string {
	var nums []int
	for _, list := range [][]string{r.Rules, r.Defaults, r.Warnings} {
		for _, s := range list {
			for _, m := range ruleTag.FindAllStringSubmatch(s, -1) {
				n, _ := strconv.Atoi(m[1])
				if !slices.Contains(nums, n) {
					nums = append(nums, n)
				}
			}
		}
	}
	slices.Sort(nums)
	tags := make([]string, len(nums))
	for i, n := range nums {
		tags[i] = "R" + strconv.Itoa(n)
	}
	return tags
}

// RuleDoc is where a rule tag is explained: its section of docs/kvbytes.md.
func RuleDoc(tag string) string {
	return "docs/kvbytes.md#" + strings.ToLower(tag)
}
