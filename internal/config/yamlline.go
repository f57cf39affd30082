package config

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// problemLine moves a YAML syntax error to the line at fault. For an
// indentation mistake inside a block ("did not find expected key" or "'-'
// indicator") the library reports the line where the enclosing block
// starts, which may be many lines above the one a person has to fix. The
// first prefix of the document that fails with the same message ends at the
// faulty line.
func problemLine(data []byte, err error) error {
	var te *yaml.TypeError
	if err == nil || errors.As(err, &te) {
		return err
	}
	m := lineRE.FindStringSubmatchIndex(err.Error())
	if m == nil {
		return err
	}
	msg := err.Error()
	reported, _ := strconv.Atoi(msg[m[2]:m[3]])
	what := msg[m[1]:]
	lines := bytes.SplitAfter(data, []byte("\n"))
	for n := max(reported, 1); n <= len(lines); n++ {
		var node yaml.Node
		perr := yaml.Unmarshal(bytes.Join(lines[:n], nil), &node)
		if perr == nil {
			continue
		}
		if pm := lineRE.FindStringSubmatchIndex(perr.Error()); pm != nil && perr.Error()[pm[1]:] == what {
			return fmt.Errorf("line %d: %s", n, what)
		}
	}
	return err
}
