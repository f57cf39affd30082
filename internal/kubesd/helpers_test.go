package kubesd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ptdmon/ptdmon/internal/config"
)

func TestMain(m *testing.M) {
	// client-go's informers use the watch-list protocol by default, which
	// the fake clientset does not speak (its initial-events bookmark): list
	// and watch instead, as Prometheus' own discovery tests do.
	os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	os.Exit(m.Run())
}

// pod is a pod as the API server holds it: labels, annotations, its
// containers' ports, and whether it is Ready.
type pod struct {
	ns, name    string
	ip          string
	labels      map[string]string
	annotations map[string]string
	ports       []apiPort
	ready       bool
}

func (p pod) object() *apiv1.Pod {
	status := apiv1.ConditionFalse
	if p.ready {
		status = apiv1.ConditionTrue
	}
	ns := p.ns
	if ns == "" {
		ns = "serving"
	}
	ip := p.ip
	if ip == "" {
		ip = "10.0.0.1"
	}
	return &apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns, Labels: p.labels, Annotations: p.annotations, UID: types.UID("uid-" + p.name)},
		Spec:       apiv1.PodSpec{Containers: []apiv1.Container{{Name: "engine", Ports: p.ports}}},
		Status: apiv1.PodStatus{
			Phase:      apiv1.PodRunning,
			PodIP:      ip,
			Conditions: []apiv1.PodCondition{{Type: apiv1.PodReady, Status: status}},
		},
	}
}

type apiPort = apiv1.ContainerPort

func port(name string, n int32) apiv1.ContainerPort {
	return apiv1.ContainerPort{Name: name, ContainerPort: n, Protocol: apiv1.ProtocolTCP}
}

// watched runs Watch against a fake clientset holding pods, and keeps the
// latest set it announced.
type watched struct {
	client *fake.Clientset
	mu     sync.Mutex
	latest []config.Target
	n      int // updates so far
}

func startWatch(t *testing.T, sd *config.KubernetesSD, namespaces []string, pods ...pod) *watched {
	t.Helper()
	client := fake.NewClientset()
	w := &watched{client: client}
	for _, p := range pods {
		w.create(t, p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Watch(ctx, sd, client, namespaces, func(ts []config.Target) {
			w.mu.Lock()
			w.latest, w.n = ts, w.n+1
			w.mu.Unlock()
		}, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func (w *watched) create(t *testing.T, p pod) {
	t.Helper()
	o := p.object()
	if _, err := w.client.CoreV1().Pods(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (w *watched) update(t *testing.T, p pod) {
	t.Helper()
	o := p.object()
	if _, err := w.client.CoreV1().Pods(o.Namespace).Update(context.Background(), o, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (w *watched) remove(t *testing.T, ns, name string) {
	t.Helper()
	if err := w.client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// show is a target set as one line per target, for comparisons.
func show(ts []config.Target) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%s %s role=%s engine=%s pool=%s\n", t.Name, t.URL, t.Role, t.Engine, t.Pool)
	}
	return b.String()
}

// waitUpdates waits until Watch has announced n sets.
func (w *watched) waitUpdates(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		got := w.n
		w.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d updates, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wait waits until the announced set shows as want.
func (w *watched) wait(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		got := show(w.latest)
		w.mu.Unlock()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("targets:\n%s\nwant:\n%s", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
