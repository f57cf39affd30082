package benchresult

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestFind(t *testing.T) {
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(path string, b []byte, mod time.Time) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	since := time.Now().Add(-time.Minute)
	old := since.Add(-time.Hour)
	f := func(name string, args []string, files map[string]string, stale []string, want string) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for path, fx := range files {
				mod := since.Add(time.Second)
				if slices.Contains(stale, path) {
					mod = old
				}
				write(filepath.Join(dir, path), fixture(fx), mod)
			}
			got := Find(args, dir, since)
			if want == "" && got != "" || want != "" && got != filepath.Join(dir, want) {
				t.Errorf("found %q, want %q", got, want)
			}
		})
	}
	f("vLLM --result-dir and --result-filename", []string{"vllm", "bench", "serve", "--save-result", "--result-dir", "out", "--result-filename=r.json"},
		map[string]string{"out/r.json": "vllm_bench_serve.json"}, nil, "out/r.json")
	f("vLLM default name in the working directory", []string{"vllm", "bench", "serve", "--save-result"},
		map[string]string{"openai-2.0qps-Llama-20261201-100512.json": "vllm_bench_serve.json", "notes.json": "guidellm_benchmarks.json"},
		[]string{"notes.json"}, "openai-2.0qps-Llama-20261201-100512.json")
	f("AIPerf artifacts: the records before the profile", []string{"aiperf", "profile", "--artifact-dir", "artifacts/run1"},
		map[string]string{"artifacts/run1/profile_export_aiperf.json": "aiperf_profile_export_aiperf.json",
			"artifacts/run1/profile_export.jsonl": "aiperf_profile_export.jsonl"}, nil, "artifacts/run1/profile_export.jsonl")
	f("GuideLLM --output-path", []string{"guidellm", "benchmark", "--output-path=res/benchmarks.json"},
		map[string]string{"res/benchmarks.json": "guidellm_benchmarks.json"}, nil, "res/benchmarks.json")
	f("only files from before the run", []string{"python3", "-m", "sglang.bench_serving"},
		map[string]string{"sglang_1201_1000_1024_256.jsonl": "sglang_bench_serving.jsonl"}, []string{"sglang_1201_1000_1024_256.jsonl"}, "")
	f("a result under any name, told by its content", []string{"x"}, map[string]string{"config.json": "llmd_br_v0_2_1_example.yaml"}, nil, "config.json")
}

func TestKeep(t *testing.T) {
	dir := t.TempDir()
	if Kept(dir) != "" {
		t.Fatal("an empty recording keeps a result")
	}
	p, err := Keep(dir, filepath.Join("testdata", "vllm_bench_serve.json"))
	if err != nil {
		t.Fatal(err)
	}
	if Kept(dir) != p {
		t.Fatalf("kept %q, want %q", Kept(dir), p)
	}
	if _, err := ReadFile(p); err != nil {
		t.Fatal(err)
	}
}
