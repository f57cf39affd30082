package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFileSDTargetLabel: ptd_target names a file_sd target, as it names
// every series; the former ptd_name is read when ptd_target is absent.
func TestFileSDTargetLabel(t *testing.T) {
	f := func(name, labels, want string) {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "t.json")
			if err := os.WriteFile(p, []byte(`[{"targets": ["10.0.0.1:8000"], "labels": {"ptd_role": "decode"`+labels+`}}]`), 0o644); err != nil {
				t.Fatal(err)
			}
			ts, err := ReadFileSD([]FileSDEntry{{Files: []string{p}}})
			if err != nil || len(ts) != 1 || ts[0].Name != want {
				t.Fatalf("targets %+v, err %v; want one named %q", ts, err, want)
			}
		})
	}
	f("ptd_target", `, "ptd_target": "d0"`, "d0")
	f("deprecated ptd_name", `, "ptd_name": "d0"`, "d0")
	f("ptd_target wins", `, "ptd_name": "old", "ptd_target": "new"`, "new")
	f("neither", ``, "10.0.0.1:8000")
}

// TestFileSDRoleLabel: a plain role (and engine) label says what a file_sd
// target is, as docs/engines.md says; ptd_role and ptd_engine win.
func TestFileSDRoleLabel(t *testing.T) {
	f := func(name, labels, role, engine string) {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "t.json")
			if err := os.WriteFile(p, []byte(`[{"targets": ["10.0.0.1:8000"], "labels": {`+labels+`}}]`), 0o644); err != nil {
				t.Fatal(err)
			}
			ts, err := ReadFileSD([]FileSDEntry{{Files: []string{p}}})
			if err != nil || len(ts) != 1 || ts[0].Role != role || ts[0].Engine != engine {
				t.Fatalf("targets %+v, err %v; want role %q, engine %q", ts, err, role, engine)
			}
		})
	}
	f("role", `"role": "prefill"`, "prefill", "")
	f("role and engine", `"role": "decode", "engine": "vllm"`, "decode", "vllm")
	f("ptd_role wins", `"role": "decode", "ptd_role": "prefill"`, "prefill", "")
	f("ptd_engine wins", `"role": "decode", "engine": "sglang", "ptd_engine": "vllm"`, "decode", "vllm")
}
