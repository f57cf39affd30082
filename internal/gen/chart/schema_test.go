package chart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// schemas are the vendored Kubernetes OpenAPI schemas by name.
var schemas = func() map[string]any {
	b, err := os.ReadFile("testdata/kubernetes-openapi-v3.json")
	if err != nil {
		panic(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	return doc.Components.Schemas
}()

// schemaOf names the schema of each kind the chart makes.
var schemaOf = map[string]string{
	"v1/ConfigMap":             "io.k8s.api.core.v1.ConfigMap",
	"v1/Service":               "io.k8s.api.core.v1.Service",
	"v1/ServiceAccount":        "io.k8s.api.core.v1.ServiceAccount",
	"v1/PersistentVolumeClaim": "io.k8s.api.core.v1.PersistentVolumeClaim",
	"apps/v1/Deployment":       "io.k8s.api.apps.v1.Deployment",
}

// validate checks every object: the core and apps kinds against the
// vendored OpenAPI schemas (types, required fields, no field the
// schema does not have); RBAC objects by a strict decoding into
// k8s.io/api's types, whose schema is the same; the Prometheus Operator's
// kinds are compared with deploy/k8s elsewhere.
func validate(t *testing.T, objs map[string]object) {
	t.Helper()
	for key, o := range objs {
		gvk := fmt.Sprint(o["apiVersion"], "/", o["kind"])
		if name, ok := schemaOf[gvk]; ok {
			for _, e := range check(key, o, schemas[name]) {
				t.Error(e)
			}
			continue
		}
		var into any
		switch gvk {
		case "rbac.authorization.k8s.io/v1/Role":
			into = &rbacv1.Role{}
		case "rbac.authorization.k8s.io/v1/RoleBinding":
			into = &rbacv1.RoleBinding{}
		case "rbac.authorization.k8s.io/v1/ClusterRole":
			into = &rbacv1.ClusterRole{}
		case "rbac.authorization.k8s.io/v1/ClusterRoleBinding":
			into = &rbacv1.ClusterRoleBinding{}
		case "monitoring.coreos.com/v1/PodMonitor", "monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule":
			continue
		default:
			t.Errorf("%s: %s has no schema here", key, gvk)
			continue
		}
		b, _ := json.Marshal(o)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(into); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
}

// check validates v against schema s, returning one error per problem.
func check(path string, v any, s any) []string {
	m, _ := s.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		return check(path, v, schemas[strings.TrimPrefix(ref, "#/components/schemas/")])
	}
	var errs []string
	if all, ok := m["allOf"].([]any); ok {
		for _, sub := range all {
			errs = append(errs, check(path, v, sub)...)
		}
	}
	if one, ok := m["oneOf"].([]any); ok {
		n := 0
		for _, sub := range one {
			if len(check(path, v, sub)) == 0 {
				n++
			}
		}
		if n == 0 {
			errs = append(errs, fmt.Sprintf("%s: %v (%T) matches none of %v", path, v, v, one))
		}
	}
	if m["x-kubernetes-preserve-unknown-fields"] == true {
		return errs
	}
	switch m["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return append(errs, fmt.Sprintf("%s: %T, want an object", path, v))
		}
		props, _ := m["properties"].(map[string]any)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch {
			case props[k] != nil:
				errs = append(errs, check(path+"."+k, obj[k], props[k])...)
			case m["additionalProperties"] != nil:
				errs = append(errs, check(path+"."+k, obj[k], m["additionalProperties"])...)
			default:
				errs = append(errs, fmt.Sprintf("%s: unknown field %q", path, k))
			}
		}
		req, _ := m["required"].([]any)
		for _, r := range req {
			if _, ok := obj[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s: required field %q missing", path, r))
			}
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			return append(errs, fmt.Sprintf("%s: %T, want an array", path, v))
		}
		for i, item := range l {
			errs = append(errs, check(fmt.Sprintf("%s[%d]", path, i), item, m["items"])...)
		}
	case "string":
		if _, ok := v.(string); !ok {
			errs = append(errs, fmt.Sprintf("%s: %v (%T), want a string", path, v, v))
		}
	case "integer":
		if _, ok := v.(int); !ok {
			errs = append(errs, fmt.Sprintf("%s: %v (%T), want an integer", path, v, v))
		}
	case "number":
		switch v.(type) {
		case int, float64:
		default:
			errs = append(errs, fmt.Sprintf("%s: %v (%T), want a number", path, v, v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			errs = append(errs, fmt.Sprintf("%s: %v (%T), want a boolean", path, v, v))
		}
	}
	return errs
}

// TestSchemaCheck: the checker finds what it must, so TestRender cannot
// pass by checking nothing.
func TestSchemaCheck(t *testing.T) {
	dep := func(edit func(o object)) object {
		var o object
		_ = json.Unmarshal([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},
			"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"spec":{"containers":[{"name":"c","image":"i",
			"ports":[{"containerPort":9433}],"resources":{"requests":{"cpu":"200m","memory":"192Mi"}}}]}}}}`), &o)
		// encoding/json gives float64; YAML, as the chart is read, gives int.
		dig(o, "spec", "template", "spec", "containers", 0, "ports", 0).(map[string]any)["containerPort"] = 9433
		if edit != nil {
			edit(o)
		}
		return o
	}
	f := func(o object, want string) {
		t.Helper()
		errs := strings.Join(check("d", o, schemas["io.k8s.api.apps.v1.Deployment"]), "\n")
		if want == "" && errs != "" || want != "" && !strings.Contains(errs, want) {
			t.Errorf("errors %q, want %q", errs, want)
		}
	}
	f(dep(nil), "")
	f(dep(func(o object) { o["spec"].(map[string]any)["replicas"] = "one" }), "d.spec.replicas: one (string), want an integer")
	f(dep(func(o object) { delete(o["spec"].(map[string]any), "selector") }), `required field "selector" missing`)
	f(dep(func(o object) { o["spec"].(map[string]any)["replica"] = 1 }), `d.spec: unknown field "replica"`)
	f(dep(func(o object) {
		dig(o, "spec", "template", "spec", "containers", 0, "ports", 0).(map[string]any)["containerPort"] = "metrics"
	}), "d.spec.template.spec.containers[0].ports[0].containerPort: metrics (string), want an integer")
	f(dep(func(o object) {
		dig(o, "spec", "template", "spec", "containers", 0, "resources", "requests").(map[string]any)["cpu"] = true
	}), "matches none of")
}
