package sim

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// scenarioFile is the YAML form: an optional built-in to start from, then
// any Scenario field.
type scenarioFile struct {
	Base     string `yaml:"base"`
	Scenario `yaml:",inline"`
}

// LoadScenarioFile reads a YAML scenario. Unknown keys are rejected and every
// error names file:line. Keys left out keep the values of `base:` (a
// built-in scenario, default "balanced"); fields left out of a group take
// the default group's values.
func LoadScenarioFile(path string) (Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, fmt.Errorf("read scenario: %w", err)
	}
	return ParseScenario(path, data)
}

var yamlLineRe = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// ParseScenario is LoadScenarioFile for bytes; name is used in errors.
func ParseScenario(name string, data []byte) (Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Scenario{}, yamlErr(name, err)
	}
	var head struct {
		Base string `yaml:"base"`
	}
	_ = root.Decode(&head) // only to find base; real errors come below
	baseName := head.Base
	if baseName == "" {
		baseName = "balanced"
	}
	base, err := LoadScenario(baseName)
	if err != nil {
		return Scenario{}, fmt.Errorf("%s:%d: base: %w", name, lineOf(&root, "base"), err)
	}
	defaults := base.Groups[0]
	f := scenarioFile{Scenario: base}
	f.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return Scenario{}, yamlErr(name, err)
	}
	sc := f.Scenario
	for i := range sc.Groups {
		fillGroupDefaults(&sc.Groups[i], defaults)
	}
	if err := sc.Validate(); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return Scenario{}, fmt.Errorf("%s:%d: %w", name, lineOf(&root, fe.path), err)
		}
		return Scenario{}, fmt.Errorf("%s: %w", name, err)
	}
	return sc, nil
}

func yamlErr(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			msgs = append(msgs, lineMsg(name, e))
		}
		return fmt.Errorf("%s", strings.Join(msgs, "\n"))
	}
	return errors.New(lineMsg(name, err.Error()))
}

func lineMsg(name, msg string) string {
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		return name + ":" + m[1] + ": " + m[2]
	}
	return name + ": " + strings.TrimPrefix(msg, "yaml: ")
}

func fillGroupDefaults(g *Group, d Group) {
	g.Engine = cmp.Or(g.Engine, d.Engine)
	g.Connector = profileFor(g.Engine).connector(g.Connector)
	g.Prefill.Instances = cmp.Or(g.Prefill.Instances, d.Prefill.Instances)
	g.Prefill.TokensPerSec = cmp.Or(g.Prefill.TokensPerSec, d.Prefill.TokensPerSec)
	g.Prefill.MaxBatch = cmp.Or(g.Prefill.MaxBatch, d.Prefill.MaxBatch)
	g.Prefill.KVSlots = cmp.Or(g.Prefill.KVSlots, d.Prefill.KVSlots)
	g.Transfer.BandwidthBytesPerSec = cmp.Or(g.Transfer.BandwidthBytesPerSec, d.Transfer.BandwidthBytesPerSec)
	g.Transfer.Threads = cmp.Or(g.Transfer.Threads, d.Transfer.Threads)
	g.Decode.Instances = cmp.Or(g.Decode.Instances, d.Decode.Instances)
	g.Decode.StepTime = cmp.Or(g.Decode.StepTime, d.Decode.StepTime)
	g.Decode.MaxBatch = cmp.Or(g.Decode.MaxBatch, d.Decode.MaxBatch)
	g.Decode.KVSlots = cmp.Or(g.Decode.KVSlots, d.Decode.KVSlots)
}

// lineOf finds the line of a dotted field path such as
// "groups[1].prefill.kv_slots" in a YAML document, or of its nearest
// ancestor present in the file (line 1 if none).
func lineOf(root *yaml.Node, path string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 1
	if n.Line > 0 {
		line = n.Line
	}
	for _, part := range strings.Split(path, ".") {
		key, idx := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			key = part[:i]
			idx, _ = strconv.Atoi(part[i+1 : len(part)-1])
		}
		if n.Kind != yaml.MappingNode {
			return line
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line = n.Content[i].Line
				next = n.Content[i+1]
				break
			}
		}
		if next == nil {
			return line
		}
		n = next
		if idx >= 0 {
			if n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				return line
			}
			n = n.Content[idx]
			line = n.Line
		}
	}
	return line
}

// LoadScenarioFrom reads the scenario file at path, or the built-in
// scenario name when path is empty: what `ptdmon sim` and `ptdmon demo`
// take from -scenario-file and -scenario.
func LoadScenarioFrom(path, name string) (Scenario, error) {
	if path != "" {
		return LoadScenarioFile(path)
	}
	return LoadScenario(name)
}
