package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

func init() {
	register("gen", "generate Prometheus config and rules, Grafana dashboards, compose and k8s manifests", runGen)
}

const genUsage = `usage: ptdmon gen <artifact> [flags]

artifacts:
  prometheus  scrape config for ptdmon's /metrics and the engines (stdout or -out FILE)
  rules       recording and alerting rules for both paths (stdout or -out FILE)
  slo         SLO attainment and goodput rules for the engines path (-ttft, -itl, -e2e seconds)
  grafana     dashboards as JSON files (-out DIR, default ./ptdmon-dashboards)
  compose     docker-compose, Kubernetes manifests, the Helm chart and dashboards (-out DIR, default ./ptdmon-compose)

Existing files are never overwritten without -force.
Run 'ptdmon gen <artifact> -h' for the flags of one artifact.
`

// genDefaultOut is where each artifact goes without -out.
var genDefaultOut = map[string]string{"prometheus": "-", "rules": "-", "slo": "-", "grafana": "ptdmon-dashboards", "compose": "ptdmon-compose"}

func runGen(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			fmt.Fprint(stdout, genUsage)
			return cli.ExitOK
		case "-version", "--version":
			fmt.Fprintln(stdout, "ptdmon", cli.Version())
			return cli.ExitOK
		}
	}
	c := cli.New("gen", "<artifact> [flags]", "", cli.NoArgs, stdout, stderr)
	if len(args) == 0 {
		return c.Fail(cli.Usagef("missing artifact: prometheus, rules, slo, grafana or compose"))
	}
	what := args[0]
	def, ok := genDefaultOut[what]
	if !ok {
		return c.Fail(cli.Usagef("unknown artifact %q: want prometheus, rules, slo, grafana or compose", what))
	}
	c = cli.New("gen "+what, "[flags]", "", cli.NoArgs, stdout, stderr)
	fs := c.Flags
	var (
		cfgPath = new(string)
		window  = new(time.Duration)
		kvBytes = new(int64)
		out     = new(string)
	)
	// gen slo takes none of the configuration: its flags are its own.
	if what != "slo" {
		fs.StringVar(cfgPath, "config", "", "ptdmon.yaml (targets, window, kv_bytes_per_request)")
		fs.DurationVar(window, "window", 0, "window W of the windowed rates (default: the config's, else 5s)")
		fs.Int64Var(kvBytes, "kv-bytes-per-request", 0, "B_request for the engines path (default: the config's)")
	}
	fs.StringVar(out, "out", def, "where to write (- for stdout)")
	fs.StringVar(out, "o", def, "same as -out, as record and report spell it")
	force := fs.Bool("force", false, "overwrite existing files")
	var ptdmonAddr, srcDir, release *string
	var slo *gen.SLOInput
	var ruleFiles listFlag
	switch what {
	case "prometheus":
		ptdmonAddr = fs.String("ptdmon", "", "host:port of ptdmon's /metrics (default: the config's listen address)")
		fs.Var(&ruleFiles, "rule-file", "rule file to list in rule_files (repeatable)")
	case "compose":
		srcDir = fs.String("src", "", "the ptdmon source tree the compose file builds the image from (default: the one around the current directory)")
		release = fs.String("release", gen.DefaultRelease, "the release label of the PodMonitor, ServiceMonitor and PrometheusRule, which kube-prometheus-stack selects on (empty: none)")
	case "slo":
		slo = &gen.SLOInput{}
		// The names serve and demo take, and the short ones as before.
		for _, t := range []struct {
			name, what string
			dst        *float64
		}{{"ttft", "TTFT", &slo.TTFT}, {"itl", "inter-token latency", &slo.ITL}, {"e2e", "end-to-end latency", &slo.E2E}} {
			fs.Float64Var(t.dst, "slo-"+t.name, 0, t.what+" threshold, seconds (0: no "+strings.ToUpper(t.name)+" SLO)")
			fs.Float64Var(t.dst, t.name, 0, "same as -slo-"+t.name)
		}
		fs.DurationVar(&slo.Window, "slo-window", 0, "range the fractions are taken over (default 1m)")
	}
	return c.Run(args[1:], func([]string) error {
		if slo != nil {
			b, err := gen.SLORulesYAML(*slo)
			if err != nil {
				return cli.Usage(err)
			}
			return writeFiles(*out, map[string][]byte{"": b}, *force, stdout)
		}
		in, cfgData, err := genInput(what, *cfgPath)
		if err != nil {
			return cli.Usage(err)
		}
		if *window != 0 {
			in.Window = *window
		}
		if *kvBytes != 0 {
			in.KVBytesPerRequest = *kvBytes
		}
		if ptdmonAddr != nil && *ptdmonAddr != "" {
			in.PtdmonAddr = *ptdmonAddr
		}
		in.RuleFiles = ruleFiles
		if release != nil {
			in.Release = *release
		}
		if err := in.Check(); err != nil {
			return cli.Usage(err)
		}
		if srcDir != nil {
			if in.BuildContext, in.Dockerfile, err = buildPaths(*out, *srcDir); err != nil {
				return err
			}
		}
		if what == "compose" {
			// Inside a container the loopback address is the container.
			if lo := gen.LoopbackTargets(in); len(lo) > 0 {
				fmt.Fprintf(stderr, "ptdmon gen compose: warning: %d target(s) on the loopback address, which inside the ptdmon and Prometheus containers is the container itself, not this machine: %s; give them an address the containers reach (host.docker.internal, the host's IP, or a service name)\n",
					len(lo), strings.Join(lo, ", "))
			}
		}
		files, err := generate(what, in, cfgData)
		if err != nil {
			return err
		}
		return writeFiles(*out, files, *force, stdout)
	})
}

// genInput loads the configuration, if any (compose uses the example
// without one), and settles B_request from it.
func genInput(what, cfgPath string) (gen.Input, []byte, error) {
	var (
		cfg  = &config.Config{}
		data []byte
		err  error
	)
	switch {
	case cfgPath != "":
		if data, err = os.ReadFile(cfgPath); err != nil {
			return gen.Input{}, nil, fmt.Errorf("read config: %w", err)
		}
		if cfg, err = config.Parse(data, cfgPath); err != nil {
			return gen.Input{}, nil, err
		}
	case what == "compose":
		data = []byte(gen.ExampleConfig)
		if cfg, err = config.Parse(data, "example ptdmon.yaml"); err != nil {
			return gen.Input{}, nil, err
		}
	}
	cfg.SetDefaults()
	kv, err := bRequest(cfg, kvsize.BasisConfig)
	if err != nil {
		return gen.Input{}, nil, err
	}
	pools, err := cfg.PoolRequests()
	if err != nil {
		return gen.Input{}, nil, err
	}
	return gen.FromConfig(cfg, kv.Bytes).WithPools(pools), data, nil
}

// buildPaths returns the compose file's build context (the source tree,
// relative to the compose directory under out) and the Dockerfile relative
// to that context, so that `docker compose up` works where the files are.
func buildPaths(out, src string) (context, dockerfile string, err error) {
	if src == "" {
		if src, err = sourceTree(); err != nil {
			return "", "", err
		}
	}
	srcAbs, err := filepath.Abs(src)
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(filepath.Join(srcAbs, "go.mod")); err != nil {
		return "", "", cli.Usagef("-src %s: not a Go module (no go.mod)", src)
	}
	composeAbs, err := filepath.Abs(filepath.Join(out, "compose"))
	if err != nil {
		return "", "", err
	}
	if context, err = filepath.Rel(composeAbs, srcAbs); err != nil {
		return "", "", err
	}
	if dockerfile, err = filepath.Rel(srcAbs, filepath.Join(composeAbs, "Dockerfile")); err != nil {
		return "", "", err
	}
	return filepath.ToSlash(context), filepath.ToSlash(dockerfile), nil
}

// sourceTree finds the ptdmon module around the working directory.
func sourceTree() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/ptdmon/ptdmon\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", cli.Usagef("no ptdmon source tree around the current directory: pass -src DIR, the checkout the image is built from")
		}
		dir = parent
	}
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

// writeFiles writes every file, or none when one exists already and force
// is off: a half-written tree would be worse than none.
func writeFiles(out string, files map[string][]byte, force bool, stdout io.Writer) error {
	if b, single := files[""]; single && len(files) == 1 {
		if out == "-" {
			_, err := stdout.Write(b)
			return err
		}
		files = map[string][]byte{filepath.Base(out): b}
		out = filepath.Dir(out)
	} else if out == "-" {
		return cli.Usagef("-out: this artifact is several files, so -out must be a directory")
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if !force {
		for _, n := range names {
			p := filepath.Join(out, filepath.FromSlash(n))
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				return cli.Usagef("%s exists: pass -force to overwrite, or another -out", p)
			}
		}
	}
	for _, n := range names {
		p := filepath.Join(out, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		fmt.Fprintln(stdout, "wrote", p)
	}
	return nil
}
