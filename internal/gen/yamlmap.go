package gen

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// om builds a YAML mapping that keeps its keys in the order given, so
// manifests read apiVersion, kind, metadata, spec as people expect.
// Arguments alternate key (string) and value (anything yaml can encode).
func om(pairs ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(pairs); i += 2 {
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: pairs[i].(string)}
		v, ok := pairs[i+1].(*yaml.Node)
		if !ok {
			v = &yaml.Node{}
			if err := v.Encode(pairs[i+1]); err != nil {
				panic(fmt.Sprintf("om: key %v: %v", pairs[i], err))
			}
		}
		n.Content = append(n.Content, k, v)
	}
	return n
}

// seq builds a YAML sequence of nodes.
func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

// encodeDocs writes one or more YAML documents after a header comment.
func encodeDocs(header string, docs ...any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, fmt.Errorf("encode yaml: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	return b.Bytes(), nil
}
