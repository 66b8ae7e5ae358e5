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

// Command demo shows tdb-operator at work on a real API server it starts
// itself (kube-apiserver and etcd built from source by
// hack/build-k8s-binaries.sh), with its eviction webhook registered: three
// zones of ingesters, one budget of maxUnavailable 2 per zone with
// maxDisruptedDomains 1, and evictions through the real Eviction API, zone by
// zone, with the per-zone status printed as it changes. It exits non-zero if
// any outcome differs from what the budget defines.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap/zapcore"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/controllers"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
)

const zoneKey = "topology.kubernetes.io/zone"

var zones = []string{"zone-a", "zone-b", "zone-c"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func run() error {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))

	vwc, err := webhookConfiguration()
	if err != nil {
		return err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{vwc}},
	}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	defer func() { _ = env.Stop() }()
	fmt.Printf("kube-apiserver up at %s; eviction webhook registered at https://%s:%d%s\n",
		cfg.Host, env.WebhookInstallOptions.LocalServingHost, env.WebhookInstallOptions.LocalServingPort, evictionwebhook.Path)

	wo := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Cache: controllers.CacheOptions(),
		WebhookServer: webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir}),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := controllers.SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	if err := (&controllers.BudgetReconciler{Client: mgr.GetClient(), APIReader: mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("tdb-operator"), Clock: clock.RealClock{}, RecordTimeout: budget.DefaultRecordTimeout,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if _, err := evictionwebhook.Register(mgr, evictionwebhook.Options{ExemptNamespace: "tdb-system"}); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("caches did not sync")
	}

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	pods, sets, err := world(ctx, c)
	if err != nil {
		return err
	}
	tdb := &policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: "ingesters"},
		Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
			Selector:            policyv1alpha1.SetAsLabelSelector(map[string]string{"app": "ingester"}),
			TopologyKey:         zoneKey,
			MaxUnavailable:      ptr.To(intstr.FromInt32(2)),
			MaxDisruptedDomains: ptr.To[int32](1),
		},
	}
	if err := c.Create(ctx, tdb); err != nil {
		return err
	}
	fmt.Println("budget mimir/ingesters: maxUnavailable 2 per zone, maxDisruptedDomains 1")

	d := &demo{ctx: ctx, c: c, cs: cs, tdb: tdb, pods: pods, sets: sets}
	// Each step waits for the allowances the budget must show, prints the
	// status, and fails the demo if they do not come.
	if err := d.step("all 24 ingesters Ready", 2, 2, 2); err != nil {
		return err
	}

	fmt.Println("\n>> draining zone-a: evicting ingester-zone-a-0..3 through the Eviction API")
	if err := d.expectEvictions("zone-a", []int{0, 1, 2, 3}, []bool{true, true, false, false}); err != nil {
		return err
	}
	if err := d.step("zone-a has spent its 2; zone-b and zone-c wait for it (maxDisruptedDomains 1)", 0, 0, 0); err != nil {
		return err
	}
	fmt.Println("\n>> kubectl drain --dry-run=server of a zone-b node (deleteOptions.dryRun in the body)")
	if err := d.evictDryRun("zone-b", 0); err != nil {
		return err
	}
	fmt.Println("\n>> evicting ingester-zone-b-0 while zone-a is disrupted")
	if err := d.expectEvictions("zone-b", []int{0}, []bool{false}); err != nil {
		return err
	}
	fmt.Println("\n>> the StatefulSet controller replaces the two evicted zone-a ingesters, and they become Ready")
	for _, i := range []int{0, 1} {
		if err := d.replace("zone-a", i); err != nil {
			return err
		}
	}
	if err := d.step("zone-a recovered: the records are done, every zone may lose 2 again", 2, 2, 2); err != nil {
		return err
	}
	fmt.Println("\n>> evicting ingester-zone-b-0 again")
	if err := d.expectEvictions("zone-b", []int{0}, []bool{true}); err != nil {
		return err
	}
	if err := d.step("zone-b is the disrupted zone now", 0, 1, 0); err != nil {
		return err
	}
	var n corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "node-c-0"}, &n); err != nil {
		return err
	}
	delete(n.Labels, zoneKey)
	if err := c.Update(ctx, &n); err != nil {
		return err
	}
	if err := d.step("node-c-0 lost its zone label: the budget fails closed", 0, 0, 0); err != nil {
		return err
	}
	fmt.Println("\n>> evicting ingester-zone-b-1 while a covered node has no zone")
	if err := d.expectEvictions("zone-b", []int{1}, []bool{false}); err != nil {
		return err
	}
	fmt.Printf("\ndemo complete: %d evictions allowed, %d refused with 429, %d dry runs recorded nothing;\n"+
		"at most %d pods of one zone were unavailable and at most %d zone(s) were disrupted at once (budget: 2 and 1)\n",
		d.allowed, d.refused, d.dryRuns, d.maxUnavailable, d.maxDisruptedZones)
	if d.maxUnavailable > 2 || d.maxDisruptedZones > 1 {
		return fmt.Errorf("the budget was exceeded")
	}
	return nil
}

// webhookConfiguration is config/webhook's configuration with the
// namespaceSelector of its kustomize patch.
func webhookConfiguration() (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	raw, err := os.ReadFile(filepath.Join("config", "webhook", "manifests.yaml"))
	if err != nil {
		return nil, err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(raw, &vwc); err != nil {
		return nil, fmt.Errorf("parsing the webhook configuration: %w", err)
	}
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"tdb-system"},
		}}}
	}
	return &vwc, nil
}

// demo holds the demo's clients and what it observed.
type demo struct {
	ctx  context.Context
	c    client.Client
	cs   *kubernetes.Clientset
	tdb  *policyv1alpha1.TopologyDisruptionBudget
	pods map[string][]*corev1.Pod
	sets map[string]*appsv1.StatefulSet

	allowed, refused, dryRuns         int
	maxUnavailable, maxDisruptedZones int32
}

func (d *demo) step(title string, wantAllowed ...int32) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		cur, err := d.get()
		if err != nil {
			return err
		}
		got := allowances(cur)
		if fmt.Sprint(got) == fmt.Sprint(wantAllowed) {
			d.observe(cur)
			show(cur, title)
			return nil
		}
		if time.Now().After(deadline) {
			show(cur, title)
			return fmt.Errorf("step %q: allowed per zone %v, want %v", title, got, wantAllowed)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (d *demo) get() (*policyv1alpha1.TopologyDisruptionBudget, error) {
	var cur policyv1alpha1.TopologyDisruptionBudget
	return &cur, d.c.Get(d.ctx, client.ObjectKeyFromObject(d.tdb), &cur)
}

// observe tracks the worst unavailability the status has shown.
func (d *demo) observe(t *policyv1alpha1.TopologyDisruptionBudget) {
	var disrupted int32
	for _, z := range t.Status.Domains {
		if u := z.ExpectedPods - z.CurrentHealthy; u > 0 {
			disrupted++
			d.maxUnavailable = max(d.maxUnavailable, u)
		}
	}
	d.maxDisruptedZones = max(d.maxDisruptedZones, disrupted)
}

// expectEvictions evicts the zone's pods at idx in turn and checks each
// outcome: allowed, or refused with 429.
func (d *demo) expectEvictions(zone string, idx []int, want []bool) error {
	for k, i := range idx {
		p := d.pods[zone][i]
		err := d.cs.PolicyV1().Evictions(p.Namespace).Evict(d.ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
		switch {
		case err == nil:
			d.allowed++
			fmt.Printf("   evict %s: allowed\n", p.Name)
		case apierrors.IsTooManyRequests(err):
			d.refused++
			fmt.Printf("   evict %s: 429 %s\n", p.Name, err)
		default:
			return fmt.Errorf("evicting %s: %w", p.Name, err)
		}
		if (err == nil) != want[k] {
			return fmt.Errorf("evicting %s: allowed=%v, the budget says %v", p.Name, err == nil, want[k])
		}
		if cur, gerr := d.get(); gerr == nil {
			d.observe(cur)
		}
	}
	return nil
}

func (d *demo) evictDryRun(zone string, i int) error {
	before, err := d.get()
	if err != nil {
		return err
	}
	p := d.pods[zone][i]
	err = d.cs.PolicyV1().Evictions(p.Namespace).Evict(d.ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
	})
	fmt.Printf("   dry-run evict %s: %v\n", p.Name, errOrAllowed(err))
	after, gerr := d.get()
	if gerr != nil {
		return gerr
	}
	if after.ResourceVersion != before.ResourceVersion {
		return fmt.Errorf("a dry-run eviction changed the budget's status")
	}
	d.dryRuns++
	return nil
}

func errOrAllowed(err error) string {
	if err == nil {
		return "would be allowed"
	}
	return err.Error()
}

// replace does what the StatefulSet controller and the kubelet would: the
// evicted pod goes and a Ready pod with the same name comes back.
func (d *demo) replace(zone string, i int) error {
	old := d.pods[zone][i]
	if err := d.c.Delete(d.ctx, old, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
		return err
	}
	for {
		err := d.c.Get(d.ctx, client.ObjectKeyFromObject(old), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			break
		}
		if err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	p := newPod(old.Name, zone, old.Spec.NodeName, d.sets[zone])
	if err := d.c.Create(d.ctx, p); err != nil {
		return err
	}
	d.pods[zone][i] = p
	return setReady(d.ctx, d.c, p, true)
}

func world(ctx context.Context, c client.Client) (map[string][]*corev1.Pod, map[string]*appsv1.StatefulSet, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mimir"}}); err != nil {
		return nil, nil, err
	}
	pods := map[string][]*corev1.Pod{}
	sets := map[string]*appsv1.StatefulSet{}
	for zi, z := range zones {
		letter := string(rune('a' + zi))
		for i := 0; i < 4; i++ {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%s-%d", letter, i), Labels: map[string]string{zoneKey: z}}}
			if err := c.Create(ctx, n); err != nil {
				return nil, nil, err
			}
		}
		labels := map[string]string{"app": "ingester", "zone": z}
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: "ingester-" + z},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](8), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ingester", Image: "ingester:demo"}}}}},
		}
		if err := c.Create(ctx, sts); err != nil {
			return nil, nil, err
		}
		sets[z] = sts
		for i := 0; i < 8; i++ {
			p := newPod(fmt.Sprintf("ingester-%s-%d", z, i), z, fmt.Sprintf("node-%s-%d", letter, i%4), sts)
			if err := c.Create(ctx, p); err != nil {
				return nil, nil, err
			}
			if err := setReady(ctx, c, p, true); err != nil {
				return nil, nil, err
			}
			pods[z] = append(pods[z], p)
		}
	}
	return pods, sets, nil
}

func newPod(name, zone, node string, sts *appsv1.StatefulSet) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: name, Labels: map[string]string{"app": "ingester", "zone": zone},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "ingester", Image: "ingester:demo"}}},
	}
}

func setReady(ctx context.Context, c client.Client, p *corev1.Pod, ready bool) error {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}
	return c.Status().Update(ctx, p)
}

func allowances(t *policyv1alpha1.TopologyDisruptionBudget) []int32 {
	var out []int32
	for _, d := range t.Status.Domains {
		out = append(out, d.DisruptionsAllowed)
	}
	return out
}

// show prints the budget's per-zone status under title.
func show(cur *policyv1alpha1.TopologyDisruptionBudget, title string) {
	fmt.Printf("\n== %s\n", title)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "ZONE\tHEALTHY/EXPECTED\tDESIRED\tALLOWED")
	for _, d := range cur.Status.Domains {
		_, _ = fmt.Fprintf(w, "%s\t%d/%d\t%d\t%d\n", d.Name, d.CurrentHealthy, d.ExpectedPods, d.DesiredHealthy, d.DisruptionsAllowed)
	}
	_ = w.Flush()
	for _, r := range cur.Status.DisruptedPods {
		fmt.Printf("record: %s in %s since %s\n", r.Name, r.Domain, r.Time.Format(time.TimeOnly))
	}
	for _, cond := range cur.Status.Conditions {
		fmt.Printf("%s=%s (%s): %s\n", cond.Type, cond.Status, cond.Reason, strings.TrimSpace(cond.Message))
	}
}
