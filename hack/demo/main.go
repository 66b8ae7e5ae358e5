// Command demo shows tdb-operator's budget engine at work on a real API
// server it starts itself (kube-apiserver and etcd built from source by
// hack/build-k8s-binaries.sh): three zones of ingesters, one budget of
// maxUnavailable 2 per zone with maxDisruptedDomains 1, and pods going
// unready and recovering zone by zone, with the per-zone status printed as it
// changes.
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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/controllers"
	"github.com/tdb-operator/tdb-operator/internal/budget"
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

	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	defer func() { _ = env.Stop() }()
	fmt.Printf("API server up at %s\n", cfg.Host)

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Cache: controllers.CacheOptions()})
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
	go func() { _ = mgr.Start(ctx) }()

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	pods, err := world(ctx, c)
	if err != nil {
		return err
	}
	tdb := &policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: "ingesters"},
		Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ingester"}},
			TopologyKey:         zoneKey,
			MaxUnavailable:      ptr.To(intstr.FromInt32(2)),
			MaxDisruptedDomains: ptr.To[int32](1),
		},
	}
	if err := c.Create(ctx, tdb); err != nil {
		return err
	}
	fmt.Println("budget mimir/ingesters: maxUnavailable 2 per zone, maxDisruptedDomains 1")

	// Each step waits for the status the budget must show, prints it, and
	// fails the demo if it does not come.
	step := func(title string, wantAllowed ...int32) error {
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err := show(ctx, c, tdb, "")
			if err != nil {
				return err
			}
			if fmt.Sprint(got) == fmt.Sprint(wantAllowed) {
				_, err = show(ctx, c, tdb, title)
				return err
			}
			if time.Now().After(deadline) {
				_, _ = show(ctx, c, tdb, title)
				return fmt.Errorf("step %q: allowed per zone %v, want %v", title, got, wantAllowed)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if err := step("all 24 ingesters Ready", 2, 2, 2); err != nil {
		return err
	}
	for _, p := range pods["zone-a"][:2] {
		if err := setReady(ctx, c, p, false); err != nil {
			return err
		}
	}
	if err := step("two zone-a ingesters restarting: zone-a spent, and zone-b/zone-c wait (maxDisruptedDomains 1)", 0, 0, 0); err != nil {
		return err
	}
	for _, p := range pods["zone-a"][:2] {
		if err := setReady(ctx, c, p, true); err != nil {
			return err
		}
	}
	if err := setReady(ctx, c, pods["zone-b"][0], false); err != nil {
		return err
	}
	if err := step("zone-a recovered; one zone-b ingester restarting", 0, 1, 0); err != nil {
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
	if err := step("node-c-0 lost its zone label: the budget fails closed", 0, 0, 0); err != nil {
		return err
	}
	fmt.Println("\ndemo complete: every step showed the allowances the budget defines (see docs/budgets.md for the arithmetic)")
	return nil
}

func world(ctx context.Context, c client.Client) (map[string][]*corev1.Pod, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mimir"}}); err != nil {
		return nil, err
	}
	out := map[string][]*corev1.Pod{}
	for zi, z := range zones {
		letter := string(rune('a' + zi))
		for i := 0; i < 4; i++ {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%s-%d", letter, i), Labels: map[string]string{zoneKey: z}}}
			if err := c.Create(ctx, n); err != nil {
				return nil, err
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
			return nil, err
		}
		for i := 0; i < 8; i++ {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: fmt.Sprintf("ingester-%s-%d", z, i), Labels: labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true)}}},
				Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%s-%d", letter, i%4), Containers: []corev1.Container{{Name: "ingester", Image: "ingester:demo"}}},
			}
			if err := c.Create(ctx, p); err != nil {
				return nil, err
			}
			if err := setReady(ctx, c, p, true); err != nil {
				return nil, err
			}
			out[z] = append(out[z], p)
		}
	}
	return out, nil
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

// show reads the budget, prints it under title (unless title is empty) and
// returns the allowance of each zone.
func show(ctx context.Context, c client.Client, tdb *policyv1alpha1.TopologyDisruptionBudget, title string) ([]int32, error) {
	var cur policyv1alpha1.TopologyDisruptionBudget
	if err := c.Get(ctx, client.ObjectKeyFromObject(tdb), &cur); err != nil {
		return nil, err
	}
	var allowed []int32
	for _, d := range cur.Status.Domains {
		allowed = append(allowed, d.DisruptionsAllowed)
	}
	if title == "" {
		return allowed, nil
	}
	fmt.Printf("\n== %s\n", title)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "ZONE\tHEALTHY/EXPECTED\tDESIRED\tALLOWED")
	for _, d := range cur.Status.Domains {
		_, _ = fmt.Fprintf(w, "%s\t%d/%d\t%d\t%d\n", d.Name, d.CurrentHealthy, d.ExpectedPods, d.DesiredHealthy, d.DisruptionsAllowed)
	}
	_ = w.Flush()
	for _, cond := range cur.Status.Conditions {
		fmt.Printf("%s=%s (%s): %s\n", cond.Type, cond.Status, cond.Reason, strings.TrimSpace(cond.Message))
	}
	return allowed, nil
}
