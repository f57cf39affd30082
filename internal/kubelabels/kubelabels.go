// Package kubelabels is the one mapping from the labels serving stacks put
// on their pods (llm-d, NVIDIA Dynamo, LeaderWorkerSet, the vLLM production
// stack, OME) to ptdmon's role, engine and pool, written as Prometheus
// relabelling steps over the pod role's discovery labels. ptdmon's own
// discovery (internal/kubesd) applies the steps with Prometheus' relabel
// package; `ptdmon gen` writes the same steps into the engines' PodMonitor;
// so the collector and a Prometheus see the same pods the same way. Each
// label is pinned to its upstream source in docs/fleet.md#pod-labels.
package kubelabels

import "strings"

// The labels the steps write, as in the generated scrape configuration.
const (
	Role   = "ptd_role"
	Engine = "ptd_engine"
	Pool   = "ptd_pool"
	// serves marks a pod some rule recognised as an engine or router; the
	// last step keeps only those.
	serves = "__tmp_ptd_serves"
)

// ptdmon's own pod labels, which override every stack's.
const (
	OwnRole   = "ptdmon.io/role"
	OwnEngine = "ptdmon.io/engine"
	OwnPool   = "ptdmon.io/pool"
)

// The stacks' pod labels (docs/fleet.md#pod-labels says where each is set).
const (
	llmdRole          = "llm-d.ai/role"
	llmdModel         = "llm-d.ai/model"
	llmdEPP           = "llm-d.ai/epp"
	gieInferencePool  = "inferencepool"
	dynamoType        = "nvidia.com/dynamo-component-type"
	dynamoSubType     = "nvidia.com/dynamo-sub-component-type"
	dynamoGraph       = "nvidia.com/dynamo-graph-deployment-name"
	lwsWorkerIndex    = "leaderworkerset.sigs.k8s.io/worker-index"
	pstackRelease     = "helm-release-name"
	pstackModel       = "model"
	omeService        = "ome.io/inferenceservice"
	omeComponent      = "component"
	promScrape        = "prometheus.io/scrape"
	defaultSeparator  = ";"
	discoveryPrefix   = "__meta_kubernetes_pod_"
	dynamoWorkerTypes = "worker|prefill|decode"
)

// Step is one relabelling step in the terms of Prometheus'
// relabel_config. Action is "replace" (the default), "keep" or "drop".
type Step struct {
	Source      []string
	Separator   string
	Regex       string
	Target      string
	Replacement string
	Action      string
	// Why says which stack the step reads, for the generated files.
	Why string
}

// PodLabel is the discovery label of a pod label, as Prometheus' pod role
// names it: __meta_kubernetes_pod_label_ and the name with every character
// outside [a-zA-Z0-9_] replaced by '_'.
func PodLabel(name string) string { return discoveryPrefix + "label_" + sanitize(name) }

// PodLabelPresent is "true" on a pod that has the label, even empty.
func PodLabelPresent(name string) string { return discoveryPrefix + "labelpresent_" + sanitize(name) }

// PodAnnotation is the discovery label of a pod annotation.
func PodAnnotation(name string) string { return discoveryPrefix + "annotation_" + sanitize(name) }

func sanitize(name string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			return c
		}
		return '_'
	}, name)
}

func set(target, value string, why string, source []string, regex string) Step {
	return Step{Source: source, Separator: defaultSeparator, Regex: regex, Target: target, Replacement: value, Action: "replace", Why: why}
}

// Steps is the mapping, in order: later steps override earlier ones, so
// ptdmon's own labels come last among the setters, and the filters at the
// end drop what is not an engine's or router's metrics endpoint.
func Steps() []Step {
	p, present := PodLabel, PodLabelPresent
	return []Step{
		// The vLLM production stack: every serving engine is vLLM, its
		// model's name is the pool.
		set(Engine, "vllm", "vLLM production stack", []string{present(pstackRelease), present(pstackModel)}, "true;true"),
		set(Pool, "$1", "vLLM production stack", []string{present(pstackRelease), p(pstackModel)}, "true;(.+)"),
		set(serves, "1", "vLLM production stack", []string{present(pstackRelease), present(pstackModel)}, "true;true"),
		// OME: the decoder decodes, the router routes; the engine prefills
		// in a disaggregated service and does both in an aggregated one, so
		// its role is left to the exposition (SGLang's engine_type).
		set(Role, "decode", "OME", []string{present(omeService), p(omeComponent)}, "true;decoder"),
		set(Role, "router", "OME", []string{present(omeService), p(omeComponent)}, "true;router"),
		set(Pool, "$1", "OME", []string{p(omeService)}, "(.+)"),
		set(serves, "1", "OME", []string{present(omeService), p(omeComponent)}, "true;(engine|decoder|router)"),
		// NVIDIA Dynamo: the frontend is the router in front of the
		// graph's workers; a worker's sub-component type, or the component
		// type of the older operators, says prefill or decode.
		set(Role, "$1", "Dynamo", []string{p(dynamoType)}, "(prefill|decode)"),
		set(Role, "$1", "Dynamo", []string{p(dynamoType), p(dynamoSubType)}, "worker;(prefill|decode)"),
		set(Role, "router", "Dynamo", []string{p(dynamoType)}, "frontend|epp"),
		set(Engine, "dynamo-frontend", "Dynamo", []string{p(dynamoType)}, "frontend"),
		set(Pool, "$1", "Dynamo", []string{p(dynamoGraph)}, "(.+)"),
		set(serves, "1", "Dynamo", []string{p(dynamoType)}, dynamoWorkerTypes+"|frontend|epp"),
		// llm-d: the role label of its scheduler's filters ("both" and the
		// encode roles are left to the exposition), the model label as the
		// pool, and the endpoint picker of the modelservice chart and of the
		// InferencePool chart.
		set(Role, "$1", "llm-d", []string{p(llmdRole)}, "(prefill|decode)"),
		set(Pool, "$1", "llm-d", []string{p(llmdModel)}, "(.+)"),
		set(serves, "1", "llm-d", []string{present(llmdRole)}, "true"),
		set(Role, "router", "llm-d", []string{present(llmdEPP), present(gieInferencePool)}, "true;.*|.*;true"),
		set(Engine, "llm-d-epp", "llm-d", []string{present(llmdEPP), present(gieInferencePool)}, "true;.*|.*;true"),
		set(serves, "1", "llm-d", []string{present(llmdEPP), present(gieInferencePool)}, "true;.*|.*;true"),
		// ptdmon's own labels override every stack's.
		set(Role, "$1", "ptdmon", []string{p(OwnRole)}, "(.+)"),
		set(Engine, "$1", "ptdmon", []string{p(OwnEngine)}, "(.+)"),
		set(Pool, "$1", "ptdmon", []string{p(OwnPool)}, "(.+)"),
		set(serves, "1", "ptdmon", []string{present(OwnRole)}, "true"),
		set(serves, "1", "ptdmon", []string{present(OwnEngine)}, "true"),
		// LeaderWorkerSet: only the leader (worker index 0) of a multi-node
		// group serves the engine's metrics.
		{Source: []string{p(lwsWorkerIndex)}, Regex: "[1-9][0-9]*", Action: "drop", Why: "LeaderWorkerSet"},
		{Source: []string{PodAnnotation(promScrape)}, Regex: "false", Action: "drop", Why: "prometheus.io/scrape: \"false\""},
		{Source: []string{serves}, Regex: "1", Action: "keep", Why: "only engines and routers"},
	}
}

// Port is a container port name a pod's metrics are read from when no
// prometheus.io/port annotation names the port, with the pods it applies
// to (Only: a keep step; nil: every pod).
type Port struct {
	Name string
	Only *Step
	Why  string
}

// Ports are the port names tried in order: the name ptdmon asks for
// ("metrics", which the endpoint picker also uses), then the names the
// stacks give their metrics ports.
func Ports() []Port {
	keep := func(source []string, regex string) *Step {
		return &Step{Source: source, Separator: defaultSeparator, Regex: regex, Action: "keep"}
	}
	return []Port{
		{Name: "metrics", Why: "ptdmon, the llm-d endpoint picker"},
		{Name: "system", Only: keep([]string{PodLabel(dynamoType)}, dynamoWorkerTypes), Why: "Dynamo workers"},
		{Name: "http", Only: keep([]string{PodLabel(dynamoType)}, "frontend"), Why: "Dynamo frontend"},
		{Name: "container-port", Only: keep([]string{PodLabelPresent(pstackRelease), PodLabelPresent(pstackModel)}, "true;true"), Why: "vLLM production stack"},
	}
}

// Annotations a pod may carry to say where its metrics are, as Prometheus'
// conventional scrape configuration reads them.
var (
	AnnotationPort   = PodAnnotation("prometheus.io/port")
	AnnotationPath   = PodAnnotation("prometheus.io/path")
	AnnotationScheme = PodAnnotation("prometheus.io/scheme")
)
