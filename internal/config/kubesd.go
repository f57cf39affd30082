package config

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// KubernetesSD finds the engines' pods through the Kubernetes API
// (internal/kubesd, docs/fleet.md#kubernetes-discovery). Only what needs no
// Kubernetes library is checked here; the selectors' syntax is checked by
// internal/kubesd, with the lines recorded here.
type KubernetesSD struct {
	// Kubeconfig is a kubeconfig file; empty: the pod's service account
	// (in-cluster).
	Kubeconfig string `yaml:"kubeconfig"`
	// Namespaces to watch; none: every namespace (needs a ClusterRole).
	Namespaces []string `yaml:"namespaces"`
	// OwnNamespace adds the namespace ptdmon runs in (in-cluster only).
	OwnNamespace bool `yaml:"own_namespace"`
	// LabelSelector and FieldSelector narrow the pods listed, in
	// Kubernetes' selector syntax ("app.kubernetes.io/part-of=llm-d").
	LabelSelector string `yaml:"label_selector"`
	FieldSelector string `yaml:"field_selector"`

	// where is each given key's "file:line".
	where map[string]string
}

var kubeSDKeys = []string{"kubeconfig", "namespaces", "own_namespace", "label_selector", "field_selector"}

// UnmarshalYAML records each key's line and refuses unknown keys (a
// Node.Decode does not inherit the decoder's KnownFields).
func (k *KubernetesSD) UnmarshalYAML(n *yaml.Node) error {
	where := map[string]string{}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			ok := false
			for _, want := range kubeSDKeys {
				ok = ok || key.Value == want
			}
			if !ok {
				return fmt.Errorf("line %d: field %s not found in kubernetes_sd (want %s)", key.Line, key.Value, strings.Join(kubeSDKeys, ", "))
			}
			where[key.Value] = ":" + strconv.Itoa(key.Line)
		}
	}
	where[""] = ":" + strconv.Itoa(n.Line)
	type plain KubernetesSD
	var p plain
	dec := *n
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*k = KubernetesSD(p)
	k.where = where
	return nil
}

// At is where key of the section was given ("ptdmon.yaml:14"), or the
// section's own line when the key was not.
func (k *KubernetesSD) At(key string) string {
	if w, ok := k.where[key]; ok {
		return w
	}
	return k.where[""]
}

func (k *KubernetesSD) inFile(file string) {
	for key, w := range k.where {
		k.where[key] = file + w
	}
	if len(k.where) == 0 {
		k.where = map[string]string{"": file}
	}
}

// dns1123Label is a namespace's name (RFC 1123 label, at most 63 bytes).
var dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (k *KubernetesSD) validate() []error {
	var errs []error
	seen := map[string]bool{}
	for _, ns := range k.Namespaces {
		if len(ns) > 63 || !dns1123Label.MatchString(ns) {
			errs = append(errs, fmt.Errorf("%s: kubernetes_sd.namespaces: %q is not a namespace name (lower-case letters, digits and '-', at most 63)", k.At("namespaces"), ns))
		}
		if seen[ns] {
			errs = append(errs, fmt.Errorf("%s: kubernetes_sd.namespaces: %q is listed twice", k.At("namespaces"), ns))
		}
		seen[ns] = true
	}
	if k.OwnNamespace && k.Kubeconfig != "" {
		errs = append(errs, fmt.Errorf("%s: kubernetes_sd.own_namespace is the namespace of the pod ptdmon runs in, which a kubeconfig does not have; list it in namespaces", k.At("own_namespace")))
	}
	return errs
}

// WatchedNamespaces are the namespaces listed, sorted, and whether the
// pods of several namespaces may meet (then targets are named
// namespace/pod, as pod names are unique only within a namespace).
func (k *KubernetesSD) WatchedNamespaces() (names []string, several bool) {
	names = append([]string(nil), k.Namespaces...)
	sort.Strings(names)
	n := len(names)
	if k.OwnNamespace {
		n++
	}
	return names, n != 1
}
