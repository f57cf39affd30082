// Package repocheck keeps the repository self-contained: a clone with nothing
// beside it must have every file its code, tests and docs refer to. The tests
// walk the working tree from the module root (no network, no git) and fail on
//
//   - a reference to material outside the repository: a path into a sibling
//     "shared" directory or an absolute /work path, a citation of a spec or of
//     notes that are not in docs/ (for example "engines.md §3" instead of
//     docs/engines.md#sglang);
//   - a relative link in a Markdown file whose target file does not exist, or
//     whose #fragment is not a heading or an <a id> of the target;
//   - a docs/NAME.md#fragment cited in a non-Markdown file (a Go comment, a
//     script) that does not resolve the same way;
//   - a file under a testdata directory that the directory's README.md does
//     not name (the README says where each file comes from);
//   - a row of the package map in docs/architecture.md whose "reads from"
//     or "read by" differs from the imports go list reports, or a package
//     without a row (packagemap_test.go).
package repocheck

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// thisFile is skipped by the reference check: it spells the patterns out.
const thisFile = "internal/repocheck/repocheck_test.go"

// skipDirs are never walked: git metadata and npm's install directory, which
// is untracked and full of other projects' files.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// outside matches references to material a clone does not have, in any file.
var outside = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`(?:\.\./)+shared\b`), "a path into a sibling shared directory"},
	{regexp.MustCompile(`(?:^|[\s"'(=:])[/]work[/]`), "an absolute /work path"},
	{regexp.MustCompile(`\bshared/(?:research|fixtures|docs|seeds|bench)\b`), "the shared notes"},
	{regexp.MustCompile(`\bSPEC\.md\b|\bSPEC\s*§|(?i:\bspec\s+§)`), "a specification that is not in the repository"},
	{regexp.MustCompile(`\b(?:golibs|anchors)\.md\b`), "notes that are not in docs/"},
	{regexp.MustCompile(`ptd-monitor\.zh|trtllm-stats-article`), "the original requirement notes"},
}

// noteName matches a mention of a notes file that has a docs/ counterpart;
// group 1 is what precedes it on the same path.
var noteName = regexp.MustCompile(`([\w./-]*?)\b((?:engines|trtllm|kvbytes)\.md)\b(\s*§)?`)

// sectionRef is a numbered-section citation ("§4", "§ 2.3"): the repository's
// docs have no numbered sections, so in code it points at outside notes.
var sectionRef = regexp.MustCompile(`§\s*\d`)

// docCite is a root-relative citation of a doc with an optional fragment, as
// Go comments write them: docs/engines.md#sglang, README.md#exported-metrics.
var docCite = regexp.MustCompile(`(?:^|[^\w./-])((?:docs/[\w.-]+\.md|README\.md)(?:#[\w-]+)?)`)

func TestNoOutsideReferences(t *testing.T) {
	root := moduleRoot(t)
	n := 0
	walkText(t, root, func(rel string, body []byte) {
		if rel == thisFile {
			return
		}
		n++
		for _, p := range outsideRefs(rel, body) {
			t.Error(p)
		}
	})
	if n < 50 {
		t.Fatalf("checked only %d files under %s; the walk is broken", n, root)
	}
}

func TestMarkdownLinks(t *testing.T) {
	root := moduleRoot(t)
	anchors := anchorCache{root: root, m: map[string]map[string]bool{}}
	n := 0
	walkText(t, root, func(rel string, body []byte) {
		if !strings.HasSuffix(rel, ".md") {
			return
		}
		n++
		for _, l := range markdownLinks(body) {
			if err := anchors.resolve(rel, l.target); err != nil {
				t.Errorf("%s:%d: link %q: %v", rel, l.line, l.target, err)
			}
		}
	})
	for _, must := range []string{"README.md", "docs/kvbytes.md"} {
		if _, err := os.Stat(filepath.Join(root, must)); err != nil {
			t.Errorf("%s: %v", must, err)
		}
	}
	if n < 5 {
		t.Fatalf("checked only %d Markdown files; the walk is broken", n)
	}
	// The rule tags that ptdmon kvbytes prints link to these anchors.
	for i := 1; i <= 14; i++ {
		if err := anchors.resolve("", fmt.Sprintf("docs/kvbytes.md#r%d", i)); err != nil {
			t.Errorf("rule R%d: %v", i, err)
		}
	}
}

func TestDocCitations(t *testing.T) {
	root := moduleRoot(t)
	anchors := anchorCache{root: root, m: map[string]map[string]bool{}}
	n := 0
	walkText(t, root, func(rel string, body []byte) {
		if strings.HasSuffix(rel, ".md") || rel == thisFile {
			return
		}
		for i, line := range bytes.Split(body, []byte("\n")) {
			for _, m := range docCite.FindAllSubmatch(line, -1) {
				n++
				if err := anchors.resolve("", string(m[1])); err != nil {
					t.Errorf("%s:%d: %s: %v", rel, i+1, m[1], err)
				}
			}
		}
	})
	if n == 0 {
		t.Fatal("no docs/…md citation found in any source file; the pattern is broken")
	}
}

// TestTestdataProvenance requires every file under a testdata directory to
// be named in that directory's README.md (by path, by name, or by the
// subdirectory that holds it), which says where the file comes from.
func TestTestdataProvenance(t *testing.T) {
	root := moduleRoot(t)
	readmes := map[string]string{} // testdata dir → README text
	var files []string
	walkText(t, root, func(rel string, body []byte) {
		dir, sub, ok := splitTestdata(rel)
		switch {
		case !ok:
		case sub == "README.md":
			readmes[dir] = string(body)
		default:
			files = append(files, rel)
		}
	})
	if len(files) == 0 {
		t.Fatal("no testdata files found; the walk is broken")
	}
	for _, rel := range files {
		dir, sub, _ := splitTestdata(rel)
		readme, ok := readmes[dir]
		if !ok {
			t.Errorf("%s: no %s/README.md saying where it comes from", rel, dir)
			continue
		}
		first, _, _ := strings.Cut(sub, "/")
		if !strings.Contains(readme, sub) && !strings.Contains(readme, path.Base(sub)) && !strings.Contains(readme, first) {
			t.Errorf("%s: not named in %s/README.md", rel, dir)
		}
	}
}

// splitTestdata splits a path at its first "testdata" component.
func splitTestdata(rel string) (dir, sub string, ok bool) {
	parts := strings.Split(rel, "/")
	for i, p := range parts[:len(parts)-1] {
		if p == "testdata" {
			return strings.Join(parts[:i+1], "/"), strings.Join(parts[i+1:], "/"), true
		}
	}
	return "", "", false
}

// TestCheckers feeds each checker inputs it must reject and inputs it must
// accept, so the repository-wide tests above cannot pass by matching nothing.
func TestCheckers(t *testing.T) {
	ref := func(rel, text string, want bool) {
		t.Helper()
		got := len(outsideRefs(rel, []byte(text))) > 0
		if got != want {
			t.Errorf("outsideRefs(%s, %q) flagged=%v, want %v", rel, text, got, want)
		}
	}
	ref("a.go", "// see "+strings.Repeat("../", 3)+"shared/fixtures/x.txt", true)
	ref("a.go", `p := "`+"/"+`work/shared/research"`, true)
	ref("a.go", "// names (shared/research/engines.md §3)", true)
	ref("a.go", "// completions exclude aborts (SPEC §2)", true)
	ref("a.go", "// as the spec § 6 says", true)
	ref("a.go", "// TensorRT-LLM's metrics (engines.md §4.1)", true)
	ref("a.go", "// the record of trtllm.md", true)
	ref("a.go", "// the KV head names engines accept (§4)", true)
	ref("a.sh", "# library choices in golibs.md", true)
	ref("a.md", "See trtllm.md §7 for the fields.", true)
	ref("a.md", "Read SPEC.md first.", true)
	ref("a.go", "// SGLang names (docs/engines.md#sglang)", false)
	ref("a.go", "// see docs/kvbytes.md#r3 and docs/trtllm.md#causal-chain", false)
	ref("a.go", "var spec = Group{}; specs := 3 // a spec, not the SPEC", false)
	ref("a.md", "The format is in [trtllm.md](trtllm.md#example-record).", false)
	ref("a.go", "fs.Int64(\"seed\", 1, \"random seed\")", false)
	ref("a.go", "// the shared state of two goroutines", false)

	slug := func(heading, want string) {
		t.Helper()
		if got := githubSlug(heading); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", heading, got, want)
		}
	}
	slug("R1 — Config resolution", "r1--config-resolution")
	slug("`trtllm-serve` worker: `/prometheus/metrics`", "trtllm-serve-worker-prometheusmetrics")
	slug("timing_metrics", "timing_metrics")
	slug("Window mode: what your engine moves for sliding-window layers", "window-mode-what-your-engine-moves-for-sliding-window-layers")
	slug("FlagCX (vLLM plugin)", "flagcx-vllm-plugin")
	slug("The [verdict](web.md) *now*", "the-verdict-now")

	doc := []byte("# Title\n\n<a id=\"r1\"></a>\n### R1 — First\n\n```\n# not a heading\n[x](missing.md)\n```\n\n## Title\n" +
		"See [first](#r1--first), [dup](#title-1), [code `x`](other.md#top) and [ext](https://example.com/a.md).\n" +
		"[ref]: ./other.md\n")
	as := anchorsOf(doc)
	for _, a := range []string{"title", "title-1", "r1", "r1--first"} {
		if !as[a] {
			t.Errorf("anchorsOf: %q missing from %v", a, as)
		}
	}
	if as["not-a-heading"] {
		t.Error("anchorsOf: a line inside a code fence was taken for a heading")
	}
	var targets []string
	for _, l := range markdownLinks(doc) {
		targets = append(targets, l.target)
	}
	want := []string{"#r1--first", "#title-1", "other.md#top", "https://example.com/a.md", "./other.md"}
	if strings.Join(targets, " ") != strings.Join(want, " ") {
		t.Errorf("markdownLinks = %q, want %q", targets, want)
	}

	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", string(doc))
	write("other.md", "# Top\n")
	ac := anchorCache{root: dir, m: map[string]map[string]bool{}}
	for target, ok := range map[string]bool{
		"other.md#top": true, "other.md": true, "a.md#r1": true, "#r1--first": true, "#title-1": true,
		"https://x/y": true, "./": true,
		"other.md#bottom": false, "missing.md": false, "a.md#r2": false, "#x": false, "../outside.md": false,
	} {
		err := ac.resolve("a.md", target)
		if (err == nil) != ok {
			t.Errorf("resolve(%q) = %v, want ok=%v", target, err, ok)
		}
	}
}

// outsideRefs lists the references in one file to material outside the
// repository, each as "file:line: reason: text".
func outsideRefs(rel string, body []byte) []string {
	md := strings.HasSuffix(rel, ".md")
	code := strings.HasSuffix(rel, ".go")
	var out []string
	for i, line := range strings.Split(string(body), "\n") {
		report := func(what string) {
			out = append(out, fmt.Sprintf("%s:%d: %s: %s", rel, i+1, what, strings.TrimSpace(line)))
		}
		for _, p := range outside {
			if p.re.MatchString(line) {
				report(p.what)
			}
		}
		for _, m := range noteName.FindAllStringSubmatch(line, -1) {
			prefix, cited := m[1], m[3] != ""
			switch {
			case md && cited:
				report("a numbered section of notes that are not in the repository")
			case !md && !strings.HasSuffix(prefix, "docs/"):
				report("a notes file cited without its docs/ path")
			}
		}
		if code && sectionRef.MatchString(line) {
			report("a numbered-section citation; cite docs/NAME.md#anchor or an upstream URL")
		}
	}
	return out
}

type link struct {
	line   int
	target string
}

var (
	inlineLink = regexp.MustCompile(`!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	htmlHref   = regexp.MustCompile(`<a\s[^>]*\bhref="([^"]+)"`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	fence      = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// markdownLinks returns the link targets of a Markdown file outside code
// fences and code spans, in order.
func markdownLinks(body []byte) []link {
	var out []link
	inFence := false
	for i, line := range strings.Split(string(body), "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, link{i + 1, m[1]})
			continue
		}
		text := codeSpan.ReplaceAllStringFunc(line, func(s string) string {
			// Keep a code span that is itself a link's text: [`x`](y).
			return strings.Repeat("x", len(s))
		})
		for _, m := range inlineLink.FindAllStringSubmatchIndex(text, -1) {
			out = append(out, link{i + 1, line[m[2]:m[3]]})
		}
		for _, m := range htmlHref.FindAllStringSubmatch(text, -1) {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

var (
	heading  = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlID   = regexp.MustCompile(`<a\s[^>]*\b(?:id|name)="([^"]+)"`)
	linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// anchorsOf returns the fragments a Markdown file defines: GitHub's heading
// slugs (with -1, -2 … for repeats) and explicit <a id> / <a name>.
func anchorsOf(body []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(body), "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlID.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := githubSlug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// githubSlug is the anchor GitHub gives a heading: the rendered text in lower
// case, with everything but letters, digits, '_', '-' and spaces removed and
// each space turned into '-'.
func githubSlug(h string) string {
	h = linkText.ReplaceAllString(h, "$1")
	h = strings.NewReplacer("`", "", "*", "").Replace(h)
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchorCache resolves link targets against the files under root.
type anchorCache struct {
	root string
	m    map[string]map[string]bool // slash path → anchors
}

// resolve checks one link target written in the file from (a slash path
// relative to root), or, when from is "", a citation relative to root.
func (c anchorCache) resolve(from, target string) error {
	if scheme.MatchString(target) {
		return nil // http, https, mailto: not checked offline
	}
	file, frag, _ := strings.Cut(target, "#")
	p := from
	if file != "" {
		p = path.Clean(path.Join(path.Dir(from), file))
		if p == ".." || strings.HasPrefix(p, "../") {
			return errors.New("points outside the repository")
		}
		st, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("no such file %s", p)
		}
		if st.IsDir() {
			return nil
		}
	}
	if frag == "" || p == "" || !strings.HasSuffix(p, ".md") {
		return nil
	}
	as, ok := c.m[p]
	if !ok {
		body, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		as = anchorsOf(body)
		c.m[p] = as
	}
	if !as[frag] {
		return fmt.Errorf("%s has no anchor #%s", p, frag)
	}
	return nil
}

// walkText calls fn for every text file under root (binary files, detected by
// a NUL byte, are skipped), with its slash path relative to root.
func walkText(t *testing.T, root string, fn func(rel string, body []byte)) {
	t.Helper()
	var rels []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skipDirs[d.Name()] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git file
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			rels = append(rels, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatalf("read %s: %v", rel, err)
		}
		if bytes.IndexByte(body[:min(len(body), 8000)], 0) >= 0 {
			continue
		}
		fn(rel, body)
	}
}

// moduleRoot walks up from the test's directory to the directory of go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}
