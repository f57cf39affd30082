package repocheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packageMapDoc holds the package map: one table row per package of the
// module, with what it owns, what it reads from and what reads it.
const packageMapDoc = "docs/architecture.md"

// mapRow is one row of the package map. Names are as the table writes
// them: `engine` for internal/engine, `cmd/ptdmon`, `e2e`.
type mapRow struct {
	line      int
	pkg       string
	readsFrom []string
	readBy    []string
	// readByTests are the packages whose tests read it ("tests of
	// `advice`, `api`").
	readByTests []string
}

// goPackage is what go list says of one package of the module; paths are
// relative to the module.
type goPackage struct {
	imports []string // the module's packages its non-test files import
	tests   []string // ... and its tests
	// testOnly: it has tests and no other Go file (e2e, repocheck); what
	// it reads from are its tests' imports.
	testOnly bool
}

// TestPackageMap holds the package map of docs/architecture.md to the
// imports go list reports: each package has a row, each row's "reads from"
// names the module's packages it imports, no more, no fewer, and its "read
// by" the packages that import it. Names in backticks outside parentheses
// are package names; everything in parentheses, and words without
// backticks, are prose. In "read by", the names after "tests of" (up to a
// semicolon) are packages whose tests import it; "tests" alone says
// nothing checkable.
func TestPackageMap(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: no go list to compare the package map with")
	}
	root := moduleRoot(t)
	pkgs, err := listPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 || pkgs["internal/engine"] == nil {
		t.Fatalf("go list found %d packages, internal/engine among them: %v; the listing is broken", len(pkgs), pkgs["internal/engine"] != nil)
	}
	body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(packageMapDoc)))
	if err != nil {
		t.Fatal(err)
	}
	rows, problems := parsePackageMap(body)
	if len(rows) < 20 {
		t.Fatalf("%s: %d rows in the package map; the parsing is broken", packageMapDoc, len(rows))
	}
	problems = append(problems, checkPackageMap(rows, pkgs)...)
	for _, p := range problems {
		t.Error(p)
	}
}

// listPackages runs go list in the module at root.
func listPackages(root string) (map[string]*goPackage, error) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports,GoFiles,TestGoFiles,XTestGoFiles", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.Bytes())
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(mod)
	if m == nil {
		return nil, errors.New("go.mod names no module")
	}
	return decodePackages(out, string(m[1]))
}

// decodePackages reads go list -json's objects, of packages of module.
func decodePackages(out []byte, module string) (map[string]*goPackage, error) {
	type listed struct {
		ImportPath                         string
		Imports, TestImports, XTestImports []string
		GoFiles, TestGoFiles, XTestGoFiles []string
	}
	var all []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		all = append(all, p)
	}
	rel := func(paths []string, self string) []string {
		var out []string
		for _, p := range paths {
			if r, ok := strings.CutPrefix(p, module+"/"); ok && r != self && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		slices.Sort(out)
		return out
	}
	pkgs := map[string]*goPackage{}
	for _, p := range all {
		name := strings.TrimPrefix(p.ImportPath, module+"/")
		pkgs[name] = &goPackage{
			imports:  rel(p.Imports, name),
			tests:    rel(append(slices.Clone(p.TestImports), p.XTestImports...), name),
			testOnly: len(p.GoFiles) == 0 && len(p.TestGoFiles)+len(p.XTestGoFiles) > 0,
		}
	}
	return pkgs, nil
}

// backticked is a name in backticks.
var backticked = regexp.MustCompile("`([^`]+)`")

// parsePackageMap reads the table under "## Package map".
func parsePackageMap(body []byte) (rows []mapRow, problems []string) {
	in, header := false, false
	for i, line := range strings.Split(string(body), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.TrimSpace(line) == "## Package map"
			continue
		case !in || !strings.HasPrefix(line, "|"):
			continue
		case !header:
			header = true // the column names
			continue
		case strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| ---"):
			continue
		}
		at := fmt.Sprintf("%s:%d", packageMapDoc, i+1)
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 4 {
			problems = append(problems, fmt.Sprintf("%s: %d cells, want 4 (package | owns | reads from | read by)", at, len(cells)))
			continue
		}
		pkg := backticked.FindStringSubmatch(cells[0])
		if pkg == nil {
			problems = append(problems, fmt.Sprintf("%s: the package cell %q names no package in backticks", at, strings.TrimSpace(cells[0])))
			continue
		}
		r := mapRow{line: i + 1, pkg: pkg[1]}
		r.readsFrom, _ = cellNames(cells[2])
		r.readBy, r.readByTests = cellNames(cells[3])
		rows = append(rows, r)
	}
	return rows, problems
}

// cellNames are the backticked names of a cell outside parentheses; those
// after "tests of" in a clause (up to a semicolon) are tests.
func cellNames(cell string) (names, tests []string) {
	for _, clause := range strings.Split(withoutParens(cell), ";") {
		before, after, ofTests := strings.Cut(clause, "tests of")
		for _, m := range backticked.FindAllStringSubmatch(before, -1) {
			names = append(names, m[1])
		}
		if ofTests {
			for _, m := range backticked.FindAllStringSubmatch(after, -1) {
				tests = append(tests, m[1])
			}
		}
	}
	return names, tests
}

// withoutParens is s with every parenthesised part removed, nested ones
// included.
func withoutParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// checkPackageMap compares the rows with the packages and says, for each
// row that differs, which names to add and which to remove.
func checkPackageMap(rows []mapRow, pkgs map[string]*goPackage) []string {
	var problems []string
	importers := map[string][]string{}
	for name, p := range pkgs {
		for _, imp := range p.imports {
			importers[imp] = append(importers[imp], name)
		}
	}
	// resolve turns a table name into a package of the module: itself
	// (cmd/ptdmon, e2e) or one under internal/.
	resolve := func(name string) (string, bool) {
		if pkgs[name] != nil {
			return name, true
		}
		if pkgs["internal/"+name] != nil {
			return "internal/" + name, true
		}
		return "", false
	}
	resolveAll := func(at, column string, names []string) []string {
		var out []string
		for _, n := range names {
			p, ok := resolve(n)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s, %s: `%s` is no package of the module (prose goes in parentheses)", at, column, n))
				continue
			}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
	seen := map[string]bool{}
	for _, r := range rows {
		at := fmt.Sprintf("%s:%d, row `%s`", packageMapDoc, r.line, r.pkg)
		name, ok := resolve(r.pkg)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no such package; remove the row", at))
			continue
		}
		if seen[name] {
			problems = append(problems, fmt.Sprintf("%s: a second row of the package; remove one", at))
			continue
		}
		seen[name] = true
		p := pkgs[name]
		reads := p.imports
		if p.testOnly {
			reads = p.tests
		}
		if d := difference(resolveAll(at, "reads from", r.readsFrom), reads); d != "" {
			problems = append(problems, fmt.Sprintf("%s, reads from: %s", at, d))
		}
		by := slices.Sorted(slices.Values(importers[name]))
		if d := difference(resolveAll(at, "read by", r.readBy), by); d != "" {
			problems = append(problems, fmt.Sprintf("%s, read by: %s", at, d))
		}
		for _, tn := range resolveAll(at, "read by tests of", r.readByTests) {
			if !slices.Contains(pkgs[tn].tests, name) {
				problems = append(problems, fmt.Sprintf("%s, read by: the tests of `%s` do not import it; remove it", at, short(tn)))
			}
		}
	}
	var missing []string
	for name := range pkgs {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	for _, name := range missing {
		p := pkgs[name]
		reads := p.imports
		if p.testOnly {
			reads = p.tests
		}
		problems = append(problems, fmt.Sprintf("%s: no row for `%s`; add one that reads from %s and is read by %s",
			packageMapDoc, name, listNames(reads), listNames(slices.Sorted(slices.Values(importers[name])))))
	}
	return problems
}

// difference says what to add to documented and remove from it for it to
// be actual; empty when they are equal.
func difference(documented, actual []string) string {
	var add, remove []string
	for _, a := range actual {
		if !slices.Contains(documented, a) {
			add = append(add, a)
		}
	}
	for _, d := range documented {
		if !slices.Contains(actual, d) {
			remove = append(remove, d)
		}
	}
	var parts []string
	if len(add) > 0 {
		parts = append(parts, "add "+listNames(add))
	}
	if len(remove) > 0 {
		parts = append(parts, "remove "+listNames(remove))
	}
	return strings.Join(parts, "; ")
}

// short is a package as the table names it.
func short(name string) string { return strings.TrimPrefix(name, "internal/") }

func listNames(names []string) string {
	if len(names) == 0 {
		return "—"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + short(n) + "`"
	}
	return strings.Join(out, ", ")
}

// The parsing and the comparison on a map written wrong on purpose.
func TestPackageMapChecker(t *testing.T) {
	doc := "# Architecture\n\n## Package map\n\n" +
		"| package | owns | reads from | read by |\n" +
		"|---|---|---|---|\n" +
		"| `cmd/ptdmon` | subcommands | `engine`, `ledger` (its `Tap`, [x](x.md#y (z))) | — |\n" +
		"| `internal/engine` | the model (`Metric`) | — | `ledger`, `cmd/ptdmon` (`inspect`); tests of `ledger` and `e2e` |\n" +
		"| `internal/ledger` | rates | `engine`, `Tap` | `tests` |\n" +
		"| `internal/gone` | nothing | — | — |\n" +
		"| `internal/engine` | again | — | — |\n" +
		"| `internal/bad` | two cells |\n" +
		"\n## Where to change what\n\n| `internal/elsewhere` | not | the | map |\n"
	rows, problems := parsePackageMap([]byte(doc))
	if len(rows) != 5 || len(problems) != 1 || !strings.Contains(problems[0], "2 cells, want 4") {
		t.Fatalf("rows %+v, problems %q; want 5 rows and the short row named", rows, problems)
	}
	if r := rows[0]; !slices.Equal(r.readsFrom, []string{"engine", "ledger"}) || r.readBy != nil {
		t.Errorf("cmd/ptdmon reads from %q, read by %q; want engine and ledger, nothing", r.readsFrom, r.readBy)
	}
	if r := rows[1]; !slices.Equal(r.readBy, []string{"ledger", "cmd/ptdmon"}) || !slices.Equal(r.readByTests, []string{"ledger", "e2e"}) {
		t.Errorf("engine read by %q and tests of %q", r.readBy, r.readByTests)
	}
	pkgs := map[string]*goPackage{
		"cmd/ptdmon":      {imports: []string{"internal/ledger", "internal/web"}},
		"internal/engine": {},
		"internal/ledger": {imports: []string{"internal/engine"}, tests: []string{"internal/engine"}},
		"internal/web":    {},
		"e2e":             {tests: []string{"internal/ledger"}, testOnly: true},
	}
	got := checkPackageMap(rows, pkgs)
	want := []string{
		"docs/architecture.md:7, row `cmd/ptdmon`, reads from: add `web`; remove `engine`",
		"docs/architecture.md:8, row `internal/engine`, read by: remove `cmd/ptdmon`",
		"docs/architecture.md:8, row `internal/engine`, read by: the tests of `e2e` do not import it; remove it",
		"docs/architecture.md:9, row `internal/ledger`, reads from: `Tap` is no package of the module (prose goes in parentheses)",
		"docs/architecture.md:9, row `internal/ledger`, read by: `tests` is no package of the module (prose goes in parentheses)",
		"docs/architecture.md:9, row `internal/ledger`, read by: add `cmd/ptdmon`",
		"docs/architecture.md:10, row `internal/gone`: no such package; remove the row",
		"docs/architecture.md:11, row `internal/engine`: a second row of the package; remove one",
		"docs/architecture.md: no row for `e2e`; add one that reads from `ledger` and is read by —",
		"docs/architecture.md: no row for `internal/web`; add one that reads from — and is read by `cmd/ptdmon`",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
