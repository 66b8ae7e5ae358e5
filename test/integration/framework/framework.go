//go:build integration

/*
Copyright 2026 The tdb-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package framework starts a real kube-apiserver and etcd (envtest, with the
// binaries built by hack/build-k8s-binaries.sh) and the operator's manager
// for the integration suites, and creates the objects the suites share,
// built with internal/testing/builders.
package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"k8s.io/client-go/util/retry"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/controllers"
	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
	"github.com/tdb-operator/tdb-operator/internal/replica"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// Scheme knows the core, apps, policy and tdb types.
var Scheme = k8sruntime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(Scheme))
}

// RepoRoot is the repository root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// StartAPIServer starts etcd and kube-apiserver with the project's CRDs.
func StartAPIServer() (*envtest.Environment, *rest.Config, error) {
	return startAPIServer(nil)
}

// ExemptNamespace is the operator namespace of the webhook suites.
const ExemptNamespace = "tdb-system"

// StartAPIServerWithWebhook starts etcd and kube-apiserver with the CRDs and
// the project's eviction webhook configuration (config/webhook, with its
// namespaceSelector patch applied), pointed at a local TLS server whose
// address and certificates are in env.WebhookInstallOptions.
func StartAPIServerWithWebhook() (*envtest.Environment, *rest.Config, error) {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "webhook", "manifests.yaml"))
	if err != nil {
		return nil, nil, err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(raw, &vwc); err != nil {
		return nil, nil, fmt.Errorf("parsing the webhook configuration: %w", err)
	}
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{ExemptNamespace},
		}}}
	}
	return startAPIServer(&envtest.WebhookInstallOptions{ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{&vwc}})
}

func startAPIServer(webhooks *envtest.WebhookInstallOptions) (*envtest.Environment, *rest.Config, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the integration tests with 'make test-integration', which builds kube-apiserver and etcd")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	if webhooks != nil {
		env.WebhookInstallOptions = *webhooks
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting envtest: %w", err)
	}
	return env, cfg, nil
}

// Manager is a running operator manager.
type Manager struct {
	Cancel context.CancelFunc
	Done   chan error
	// Handler is the eviction webhook's handler, when the webhook is served.
	Handler *evictionwebhook.EvictionHandler
}

// StartManager runs the operator's status controller against cfg, as the
// manager binary wires it, with the given clock and record timeout.
func StartManager(cfg *rest.Config, clk clock.PassiveClock, recordTimeout time.Duration) (*Manager, error) {
	return StartManagerWith(cfg, ManagerOptions{Clock: clk, RecordTimeout: recordTimeout})
}

// ManagerOptions configure StartManagerWith.
type ManagerOptions struct {
	Clock         clock.PassiveClock
	RecordTimeout time.Duration
	// Webhook, when set, serves the eviction webhook with these options.
	Webhook *webhook.Options
	// NoController runs the webhook only (a second replica that is not the
	// leader).
	NoController bool
	// Callers says which pods may call the webhook; nil: the binary's
	// default (kube-system's).
	Callers *evictionwebhook.CallerPolicy
	// WebhookConfigName is --webhook-config-name: the configuration whose
	// namespaceSelector says which budgets are enforced ("": no check).
	WebhookConfigName string
}

// StartManagerWith runs a manager as the binary wires it.
func StartManagerWith(cfg *rest.Config, o ManagerOptions) (*Manager, error) {
	opts := ctrl.Options{
		Scheme:                 Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  snapshot.CacheOptions(),
		Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}
	if o.Webhook != nil {
		opts.WebhookServer = webhook.NewServer(*o.Webhook)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	clk, recordTimeout := o.Clock, o.RecordTimeout
	if clk == nil {
		clk = clock.RealClock{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	// As in the binary: one memory for the controllers and the webhook
	// (gone nodes, budget versions, pending statuses, one gathering layer).
	mem, err := replica.ForManager(ctx, mgr)
	if err != nil {
		cancel()
		return nil, err
	}
	if !o.NoController {
		if err := controllers.SetupAll(mgr, controllers.Options{Clock: clk, RecordTimeout: recordTimeout,
			OperatorNamespace: ExemptNamespace, Memory: mem, WebhookConfigName: o.WebhookConfigName}); err != nil {
			cancel()
			return nil, err
		}
	}
	m := &Manager{Cancel: cancel, Done: make(chan error, 1)}
	if o.Webhook != nil {
		callers := o.Callers
		if callers == nil {
			// As the binary's default.
			callers = &evictionwebhook.CallerPolicy{TrustedNamespaces: map[string]bool{"kube-system": true}}
		}
		h, err := evictionwebhook.Register(mgr, evictionwebhook.Options{ExemptNamespace: ExemptNamespace, Clock: clk, Callers: *callers,
			RecordTimeout: recordTimeout, Memory: mem})
		if err != nil {
			cancel()
			return nil, err
		}
		if o.NoController {
			// As a replica of the binary that is not the leader: it runs no
			// status controller, and checks grants on its own cache.
			h.Computes = func() bool { return false }
		}
		m.Handler = h
	}
	go func() { m.Done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("manager caches did not sync")
	}
	if o.Webhook != nil {
		if err := waitForTLS(o.Webhook.Host, o.Webhook.Port); err != nil {
			cancel()
			return nil, err
		}
	}
	return m, nil
}

// Stop stops the manager and waits for it.
func (m *Manager) Stop() error {
	m.Cancel()
	select {
	case err := <-m.Done:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("manager did not stop within 30s")
	}
}

// Namespace creates a namespace with a generated name.
func Namespace(ctx context.Context, c client.Client) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tdb-it-"}}
	if err := c.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// Node creates a node with the given labels.
func Node(ctx context.Context, c client.Client, name string, labels map[string]string) (*corev1.Node, error) {
	n := builders.Node(name).Labels(labels).Obj()
	return n, c.Create(ctx, n)
}

// StatefulSet creates a StatefulSet whose pods carry labels; no controller
// runs in envtest, so its pods are created by the test with Pod.
func StatefulSet(ctx context.Context, c client.Client, ns, name string, replicas int32, labels map[string]string) (*appsv1.StatefulSet, error) {
	s := builders.StatefulSet(name).Namespace(ns).Replicas(replicas).PodLabels(labels).Obj()
	return s, c.Create(ctx, s)
}

// PodSpec describes a pod for Pod.
type PodSpec struct {
	Name   string
	Labels map[string]string
	Node   string
	Owner  client.Object
	Ready  bool
}

// Pod creates a running pod, owned by Owner when set, bound to Node, with the
// Ready condition as asked.
func Pod(ctx context.Context, c client.Client, ns string, s PodSpec) (*corev1.Pod, error) {
	b := builders.Pod(s.Name).Namespace(ns).Labels(s.Labels).OnNode(s.Node).Container(builders.ContainerName, builders.Image)
	if s.Owner != nil {
		gvk, err := c.GroupVersionKindFor(s.Owner)
		if err != nil {
			return nil, err
		}
		b.ControlledBy(metav1.OwnerReference{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: s.Owner.GetName(), UID: s.Owner.GetUID(),
		})
	}
	p := b.Obj()
	if err := c.Create(ctx, p); err != nil {
		return nil, err
	}
	return p, SetReady(ctx, c, p, s.Ready)
}

// SetReady sets a pod Running with the Ready condition True or False.
func SetReady(ctx context.Context, c client.Client, p *corev1.Pod, ready bool) error {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	first := true
	// The operator patches pods (their deletion cost): on a conflict, set
	// the condition on the latest version, as the kubelet would.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return err
			}
		}
		first = false
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}
		return c.Status().Update(ctx, p)
	})
}

// Modify reads obj, applies change and writes it, again on a conflict, as
// kubectl edit or any controller does: the operator writes the same
// objects (budgets' status, pods' deletion costs) at any moment.
func Modify(ctx context.Context, c client.Client, obj client.Object, change func()) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return c.Update(ctx, obj)
	})
}

// waitForTLS waits until the webhook server accepts TLS connections.
func waitForTLS(host string, port int) error {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a readiness probe of a local test server
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("webhook server at %s not ready: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WebhookOptions are the serving options envtest registered for the webhook.
func WebhookOptions(env *envtest.Environment) *webhook.Options {
	w := env.WebhookInstallOptions
	return &webhook.Options{Host: w.LocalServingHost, Port: w.LocalServingPort, CertDir: w.LocalServingCertDir}
}

// ZoneKey is the topology key of the suites' worlds.
const ZoneKey = builders.ZoneKey

// World is a zoned workload: per zone, nodes and one StatefulSet whose Ready
// pods run on them.
type World struct {
	NS    string
	Nodes map[string][]string
	Sets  map[string]*appsv1.StatefulSet
	Pods  map[string][]*corev1.Pod
}

// NewWorld creates, in namespace ns, nodesPerZone nodes and a StatefulSet of
// podsPerZone Ready pods labelled app=app in each zone. Node names are
// prefixed with ns so worlds do not collide.
func NewWorld(ctx context.Context, c client.Client, ns, app string, zones []string, nodesPerZone, podsPerZone int) (*World, error) {
	w := &World{NS: ns, Nodes: map[string][]string{}, Sets: map[string]*appsv1.StatefulSet{}, Pods: map[string][]*corev1.Pod{}}
	for _, z := range zones {
		for i := 0; i < nodesPerZone; i++ {
			name := fmt.Sprintf("%s-%s-%d", ns, z, i)
			if _, err := Node(ctx, c, name, map[string]string{ZoneKey: z}); err != nil {
				return nil, err
			}
			w.Nodes[z] = append(w.Nodes[z], name)
		}
		labels := map[string]string{"app": app, "zone": z}
		sts, err := StatefulSet(ctx, c, ns, app+"-"+z, int32(podsPerZone), labels)
		if err != nil {
			return nil, err
		}
		w.Sets[z] = sts
		for i := 0; i < podsPerZone; i++ {
			p, err := Pod(ctx, c, ns, PodSpec{
				Name: fmt.Sprintf("%s-%s-%d", app, z, i), Labels: labels,
				Node: w.Nodes[z][i%nodesPerZone], Owner: sts, Ready: true,
			})
			if err != nil {
				return nil, err
			}
			w.Pods[z] = append(w.Pods[z], p)
		}
	}
	return w, nil
}
