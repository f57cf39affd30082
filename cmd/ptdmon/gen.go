package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/gen"
)

func init() {
	register("gen", "generate Prometheus config and rules, Grafana dashboards, compose and k8s manifests", runGen)
}

const genUsage = `usage: ptdmon gen <artifact> [flags]

artifacts:
  prometheus  scrape config for ptdmon's /metrics and the engines (stdout or -out FILE)
  rules       recording and alerting rules for both paths (stdout or -out FILE)
  grafana     dashboards as JSON files (-out DIR, default deploy/grafana/dashboards)
  compose     the deploy/ tree: docker-compose, Kubernetes manifests, dashboards (-out DIR, default deploy)
`

// genFlags are the flags every artifact accepts.
type genFlags struct {
	fs       *flag.FlagSet
	cfgPath  *string
	window   *time.Duration
	kvBytes  *int64
	out      *string
	ptdmon   *string
	ruleFile listFlag
	// defaultConfig is used without -config (compose: the example).
	defaultConfig []byte
}

func newGenFlags(what, defOut string, stderr io.Writer) *genFlags {
	g := &genFlags{fs: flag.NewFlagSet("gen "+what, flag.ContinueOnError)}
	g.fs.SetOutput(stderr)
	g.cfgPath = g.fs.String("config", "", "ptdmon.yaml (targets, window, kv_bytes_per_request)")
	g.window = g.fs.Duration("window", 0, "window W of the windowed rates (default: the config's, else 5s)")
	g.kvBytes = g.fs.Int64("kv-bytes-per-request", 0, "B_request for the engines path (default: the config's)")
	g.out = g.fs.String("out", defOut, "where to write")
	if what == "prometheus" {
		g.ptdmon = g.fs.String("ptdmon", "", "host:port of ptdmon's /metrics (default: the config's listen address)")
		g.fs.Var(&g.ruleFile, "rule-file", "rule file to list in rule_files (repeatable)")
	}
	return g
}

// input loads the configuration (if any) and applies the flags. Engine
// targets are checked by gen, which also accepts TensorRT-LLM.
func (g *genFlags) input() (gen.Input, []byte, error) {
	var (
		cfg  *config.Config
		data []byte
		err  error
	)
	if *g.cfgPath != "" {
		if data, err = os.ReadFile(*g.cfgPath); err != nil {
			return gen.Input{}, nil, fmt.Errorf("read config: %w", err)
		}
		if cfg, err = config.Parse(data, *g.cfgPath); err != nil {
			return gen.Input{}, nil, err
		}
	} else if g.defaultConfig != nil {
		data = g.defaultConfig
		if cfg, err = config.Parse(data, "example ptdmon.yaml"); err != nil {
			return gen.Input{}, nil, err
		}
	} else {
		cfg = &config.Config{}
	}
	cfg.SetDefaults()
	kv, err := kvRequestFromConfig(cfg, false)
	if err != nil {
		return gen.Input{}, nil, err
	}
	in := gen.FromConfig(cfg, int64(kv.Bytes))
	if *g.window != 0 {
		in.Window = *g.window
	}
	if *g.kvBytes != 0 {
		in.KVBytesPerRequest = *g.kvBytes
	}
	if g.ptdmon != nil && *g.ptdmon != "" {
		in.PtdmonAddr = *g.ptdmon
	}
	in.RuleFiles = g.ruleFile
	return in, data, in.Check()
}

func runGen(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprint(stderr, genUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	what := args[0]
	defOut := map[string]string{"prometheus": "-", "rules": "-", "grafana": "deploy/grafana/dashboards", "compose": "deploy"}
	def, ok := defOut[what]
	if !ok {
		fmt.Fprintf(stderr, "ptdmon gen: unknown artifact %q\n\n%s", what, genUsage)
		return 2
	}
	g := newGenFlags(what, def, stderr)
	if what == "compose" {
		g.defaultConfig = []byte(gen.ExampleConfig)
	}
	if err := g.fs.Parse(args[1:]); err != nil {
		return 2
	}
	if g.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ptdmon gen %s: unexpected argument %q\n", what, g.fs.Arg(0))
		return 2
	}
	in, cfgData, err := g.input()
	if err != nil {
		fmt.Fprintf(stderr, "ptdmon gen %s: %v\n", what, err)
		return 2
	}
	files, err := generate(what, in, cfgData)
	if err != nil {
		fmt.Fprintf(stderr, "ptdmon gen %s: %v\n", what, err)
		return 1
	}
	if err := writeFiles(*g.out, files, stdout); err != nil {
		fmt.Fprintf(stderr, "ptdmon gen %s: %v\n", what, err)
		return 1
	}
	return 0
}

// generate returns the artifact's files; a single unnamed file ("") goes
// to -out itself.
func generate(what string, in gen.Input, cfgData []byte) (map[string][]byte, error) {
	switch what {
	case "prometheus":
		b, err := gen.PrometheusConfig(in)
		return map[string][]byte{"": b}, err
	case "rules":
		b, err := gen.Rules(in).YAML()
		return map[string][]byte{"": b}, err
	case "grafana":
		return gen.Dashboards(in)
	default: // compose
		return gen.Deploy(in, cfgData)
	}
}

func writeFiles(out string, files map[string][]byte, stdout io.Writer) error {
	if b, single := files[""]; single && len(files) == 1 {
		if out == "-" {
			_, err := stdout.Write(b)
			return err
		}
		return writeFile(out, b)
	}
	if out == "-" {
		return fmt.Errorf("this artifact is several files: -out must be a directory")
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(out, filepath.FromSlash(n))
		if err := writeFile(p, files[n]); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "wrote", p)
	}
	return nil
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
