package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Labels of a file_sd group that ptdmon reads; the rest are kept as extra labels.
const (
	LabelRole   = "ptd_role"
	LabelEngine = "ptd_engine"
	LabelTarget = "ptd_target" // the target's name, as on every series ptdmon exports
	// LabelName is the former name of LabelTarget, still read when
	// ptd_target is absent.
	//
	// Deprecated: use LabelTarget.
	LabelName = "ptd_name"
)

type sdGroup struct {
	Targets []string          `json:"targets" yaml:"targets"`
	Labels  map[string]string `json:"labels" yaml:"labels"`
}

// ReadFileSD expands the entries' globs and reads every file, in the format
// of Prometheus' file_sd_configs (JSON, or YAML for .yml/.yaml).
func ReadFileSD(entries []FileSDEntry) ([]Target, error) {
	var out []Target
	for _, e := range entries {
		for _, pattern := range e.Files {
			files, err := filepath.Glob(pattern)
			if err != nil {
				return nil, fmt.Errorf("file_sd pattern %q: %w", pattern, err)
			}
			sort.Strings(files)
			for _, f := range files {
				ts, err := readSDFile(f)
				if err != nil {
					return nil, err
				}
				out = append(out, ts...)
			}
		}
	}
	return out, nil
}

func readSDFile(path string) ([]Target, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("file_sd: %w", err)
	}
	var groups []sdGroup
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yml", ".yaml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&groups); err != nil {
			return nil, yamlError(path, problemLine(data, err))
		}
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&groups); err != nil {
			return nil, fmt.Errorf("%s: %w", path, jsonError(data, err))
		}
	}
	var out []Target
	for gi, g := range groups {
		scheme, path0 := "http", "/metrics"
		extra := map[string]string{}
		t := Target{}
		for k, v := range g.Labels {
			switch k {
			case "__scheme__":
				scheme = v
			case "__metrics_path__":
				path0 = v
			case LabelRole:
				t.Role = v
			case LabelEngine:
				t.Engine = v
			case "role":
				// The plain label a discovery often carries; ptd_role wins.
				if _, ok := g.Labels[LabelRole]; !ok {
					t.Role = v
				} else {
					extra[k] = v
				}
			case "engine":
				if _, ok := g.Labels[LabelEngine]; !ok {
					t.Engine = v
				} else {
					extra[k] = v
				}
			case LabelTarget:
				t.Name = v
			case LabelName:
				if _, ok := g.Labels[LabelTarget]; !ok {
					t.Name = v
				}
			default:
				if !strings.HasPrefix(k, "__") {
					extra[k] = v
				}
			}
		}
		for ti, addr := range g.Targets {
			tt := t
			tt.URL = scheme + "://" + addr + path0
			if tt.Name == "" || len(g.Targets) > 1 {
				tt.Name = addr
				if t.Name != "" {
					tt.Name = t.Name + "-" + addr
				}
			}
			if len(extra) > 0 {
				tt.Labels = extra
			}
			tt.DefinedAt = fmt.Sprintf("%s: group %d, target %d", path, gi+1, ti+1)
			if err := tt.validate(); err != nil {
				return nil, fmt.Errorf("%s: target %q: %w", tt.DefinedAt, addr, err)
			}
			out = append(out, tt)
		}
	}
	return out, nil
}

// jsonError adds the line of a JSON syntax or type error.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		off = syntax.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Errorf("line %d: %w", line, err)
}
