package gen

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptdmon/ptdmon/internal/config"
)

var updateDeploy = flag.Bool("update-deploy", false, "rewrite the checked-in deploy/ tree from the generators")

// deployDir is the checked-in tree, relative to this package.
const deployDir = "../../deploy"

// exampleInput is what the checked-in tree is generated from.
func exampleInput(t *testing.T) Input {
	t.Helper()
	cfg, err := config.Parse([]byte(ExampleConfig), "example")
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("ExampleConfig does not validate: %v", err)
	}
	return FromConfig(cfg, cfg.KVBytesPerRequest)
}

func exampleDeploy(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := Deploy(exampleInput(t), []byte(ExampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDeployUpToDate fails when a file under deploy/ differs from what the
// generators produce, or is not produced by them at all. Regenerate with
// go test ./internal/gen -run TestDeployUpToDate -update-deploy.
func TestDeployUpToDate(t *testing.T) {
	files := exampleDeploy(t)
	if *updateDeploy {
		for name, b := range files {
			p := filepath.Join(deployDir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(deployDir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("deploy/%s: %v (run go test ./internal/gen -update-deploy)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("deploy/%s differs from the generator's output (run go test ./internal/gen -update-deploy)", name)
		}
	}
	err := filepath.WalkDir(deployDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(deployDir, p)
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			t.Errorf("deploy/%s is not generated: remove it or generate it", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGeneratorsDeterministic guards the golden comparison: map iteration
// or timestamps must not leak into the output.
func TestGeneratorsDeterministic(t *testing.T) {
	a, b := exampleDeploy(t), exampleDeploy(t)
	if len(a) != len(b) {
		t.Fatal("different file sets")
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}
