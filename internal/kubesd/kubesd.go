// Package kubesd is serve's Kubernetes discovery: it watches pods with
// client-go's informers, turns each into a target group with Prometheus'
// own pod discoverer (discovery/kubernetes), maps the stacks' pod labels to
// role, engine and pool with the relabelling steps of internal/kubelabels,
// and hands the Ready engine and router pods to serve as targets
// (docs/fleet.md#kubernetes-discovery).
//
// Prometheus' Discovery.New builds its own clientset from its
// configuration, with no way to give it another; so this package builds
// the pod informers the way Discovery.Run does (one per namespace, the
// selectors in the list and watch options) and gives them to the exported
// kubernetes.NewPod. The same code then runs against a cluster and against
// client-go's fake clientset in the tests.
package kubesd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/discovery/kubernetes"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ptdmon/ptdmon/internal/config"
)

// ownNamespaceFile is where Kubernetes puts the namespace of a pod's
// service account.
const ownNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Validate checks what config cannot without a Kubernetes library: the
// selectors' syntax. Errors name the line of the key.
func Validate(sd *config.KubernetesSD) error {
	var errs []error
	if _, err := labels.Parse(sd.LabelSelector); err != nil {
		errs = append(errs, fmt.Errorf("%s: kubernetes_sd.label_selector %q: %w", sd.At("label_selector"), sd.LabelSelector, err))
	}
	if _, err := fields.ParseSelector(sd.FieldSelector); err != nil {
		errs = append(errs, fmt.Errorf("%s: kubernetes_sd.field_selector %q: %w", sd.At("field_selector"), sd.FieldSelector, err))
	}
	return errors.Join(errs...)
}

// Pods is the part of a clientset the discovery uses: the core API group,
// which client-go's fake clientset also has. A narrow type keeps the other
// groups' clients out of the binary (a clientset in an interface keeps
// every group's methods; Prometheus' own discovery does the same).
type Pods interface {
	CoreV1() corev1.CoreV1Interface
}

type coreOnly struct{ core corev1.CoreV1Interface }

func (c coreOnly) CoreV1() corev1.CoreV1Interface { return c.core }

// Client connects to the cluster the configuration names: the kubeconfig
// file, or the pod's own service account. It also returns the namespaces
// to watch ("" is every namespace).
func Client(sd *config.KubernetesSD) (Pods, []string, error) {
	var (
		kcfg *rest.Config
		err  error
	)
	if sd.Kubeconfig != "" {
		kcfg, err = clientcmd.BuildConfigFromFlags("", sd.Kubeconfig)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: kubernetes_sd.kubeconfig: %w", sd.At("kubeconfig"), err)
		}
	} else if kcfg, err = rest.InClusterConfig(); err != nil {
		return nil, nil, fmt.Errorf("%s: kubernetes_sd: not in a pod (%w); give kubeconfig", sd.At(""), err)
	}
	kcfg.UserAgent = "ptdmon"
	c, err := corev1.NewForConfig(kcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: kubernetes_sd: %w", sd.At(""), err)
	}
	ns, _ := sd.WatchedNamespaces()
	if sd.OwnNamespace {
		own, err := os.ReadFile(ownNamespaceFile)
		if err != nil || len(strings.TrimSpace(string(own))) == 0 {
			return nil, nil, fmt.Errorf("%s: kubernetes_sd.own_namespace: the pod's namespace is unknown (%s)", sd.At("own_namespace"), ownNamespaceFile)
		}
		ns = append(ns, strings.TrimSpace(string(own)))
	}
	if len(ns) == 0 {
		ns = []string{apiv1.NamespaceAll}
	}
	return coreOnly{c}, ns, nil
}

// discover starts, for each namespace, a pod informer with the selectors
// and Prometheus' pod discoverer over it, which sends target groups to ch
// until ctx ends.
func discover(ctx context.Context, sd *config.KubernetesSD, client Pods, namespaces []string, ch chan<- []*targetgroup.Group, log *slog.Logger) []cache.InformerSynced {
	// NewPod counts the events it handles; the counter is not exported.
	events := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubernetes_events_total", Help: "Kubernetes events handled."}, []string{"role", "event"})
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		pods := client.CoreV1().Pods(ns)
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector, o.FieldSelector = sd.LabelSelector, sd.FieldSelector
				return pods.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector, o.FieldSelector = sd.LabelSelector, sd.FieldSelector
				return pods.Watch(ctx, o)
			},
		}
		inf := cache.NewSharedIndexInformer(lw, &apiv1.Pod{}, 0, cache.Indexers{})
		d := kubernetes.NewPod(log.With("namespace", ns), inf, nil, nil, nil, nil, false, false, false, events)
		synced = append(synced, inf.HasSynced)
		go inf.Run(ctx.Done())
		go d.Run(ctx, ch)
	}
	return synced
}

// Watch runs the discovery until ctx ends: update receives the whole set of
// pod targets after every change (several changes that arrive together are
// one update).
func Watch(ctx context.Context, sd *config.KubernetesSD, client Pods, namespaces []string, update func([]config.Target), log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	_, several := sd.WatchedNamespaces()
	ch := make(chan []*targetgroup.Group)
	synced := discover(ctx, sd, client, namespaces, ch, log)
	// Once every namespace is listed, the set is announced even if no pod
	// is a target, so serve knows the discovery works.
	listed := make(chan struct{})
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), synced...) {
			close(listed)
		}
	}()
	groups := map[string]*targetgroup.Group{}
	var last []config.Target
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case tgs := <-ch:
			put(groups, tgs)
		case <-listed:
			listed = nil
		}
		// Take whatever else is waiting, so a rollout is one update.
	drain:
		for {
			select {
			case tgs := <-ch:
				put(groups, tgs)
			default:
				break drain
			}
		}
		ts, skipped := Targets(groups, several)
		for _, s := range skipped {
			log.Debug("kubernetes_sd: pod skipped", "pod", s.Pod, "reason", s.Reason)
		}
		// The first set is announced even when empty: the pods have been
		// listed.
		if first || !equal(ts, last) {
			log.Info("kubernetes_sd targets changed", "targets", len(ts))
			first, last = false, ts
			update(ts)
		}
	}
}

func put(groups map[string]*targetgroup.Group, tgs []*targetgroup.Group) {
	for _, g := range tgs {
		if g == nil {
			continue
		}
		if len(g.Targets) == 0 {
			delete(groups, g.Source)
			continue
		}
		groups[g.Source] = g
	}
}

func equal(a, b []config.Target) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.URL != y.URL || x.Role != y.Role || x.Engine != y.Engine || x.Pool != y.Pool || len(x.Labels) != len(y.Labels) {
			return false
		}
		for k, v := range x.Labels {
			if y.Labels[k] != v {
				return false
			}
		}
	}
	return true
}
