//go:build e2e

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

// Package scope_test shows the eviction webhook's two scopes on a local
// cluster: with the opt-in scope (only namespaces labelled
// policy.tdb.dev/enforce=true), a budget elsewhere says it is not enforced,
// and while the operator is down evictions elsewhere go on; with the default
// scope, a stopped operator refuses every eviction but its own namespace's.
// `make test-e2e-scope`.
package scope_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/hack/localwebhook/registration"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	clusterName = "tdb-scope"
	enforce     = "policy.tdb.dev/enforce"
)

var keep = flag.Bool("keep", false, "Keep the cluster at the end instead of tearing it down.")

var operatorOptions = kwokenv.OperatorOptions{WebhookPort: 19943, MetricsPort: 18780, ProbePort: 18781, WebhookScope: registration.ScopeLabelled}

func TestWebhookScope(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	b, err := kwokenv.StartBench(clusterName, "scope-e2e-", "opt-in webhook scope",
		[]string{"ZONES=1", "NODES_PER_ZONE=2", "POD_READY_DELAY=1s"}, operatorOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Close(*keep) }()
	k8s := b.Client
	cs := kubernetes.NewForConfigOrDie(restConfig(t, b.Cluster))

	// Two namespaces, the same workload and the same budget in each: one
	// that allows nothing (minAvailable 100%).
	for _, ns := range []string{"enforced", "free"} {
		labels := map[string]string{}
		if ns == "enforced" {
			labels[enforce] = "true"
		}
		fixture.Must(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}))
		fixture.Must(t, k8s.Create(ctx, kwokenv.RollingDeployment(kwokenv.Pods{Namespace: ns, App: "web"}, "web", 3, 1, 0)))
		fixture.Must(t, k8s.Create(ctx, builders.Budget("web").Namespace(ns).MatchLabels(map[string]string{"app": "web"}).
			MinAvailable(intstr.FromString("100%")).Obj()))
	}

	t.Log("with the operator running, the budget outside the scope says it is not enforced")
	waitCondition(ctx, t, k8s, "enforced", policyv1alpha1.ReasonInsufficientPods)
	free := waitCondition(ctx, t, k8s, "free", policyv1alpha1.ReasonNotEnforced)
	if !strings.Contains(free.Message, "kubectl label namespace free "+enforce+"=true") {
		t.Errorf("NotEnforced message does not say how to enforce it: %q", free.Message)
	}
	// The webhook refuses in the labelled namespace; the API server does
	// not ask it about the other.
	if err := fixture.Evict(ctx, cs, "enforced", firstPod(ctx, t, k8s, "enforced"), true); err == nil || !strings.Contains(err.Error(), "topology disruption budget") {
		t.Errorf("dry-run eviction in the labelled namespace: %v, want the budget's refusal", err)
	}
	if err := fixture.Evict(ctx, cs, "free", firstPod(ctx, t, k8s, "free"), true); err != nil {
		t.Errorf("dry-run eviction in the unlabelled namespace: %v, want allowed (the webhook is not asked)", err)
	}

	t.Log("labelling the namespace enforces its budget; removing the label lets it go again")
	setLabel(ctx, t, k8s, "free", "true")
	waitCondition(ctx, t, k8s, "free", policyv1alpha1.ReasonInsufficientPods)
	setLabel(ctx, t, k8s, "free", "")
	waitCondition(ctx, t, k8s, "free", policyv1alpha1.ReasonNotEnforced)

	t.Log("with the operator stopped: evictions outside the scope go on, the labelled namespace's are refused")
	b.Operator.Stop()
	b.Operator = nil
	enforcedPod := firstPod(ctx, t, k8s, "enforced")
	if err := fixture.Evict(ctx, cs, "enforced", enforcedPod, false); err == nil {
		t.Errorf("eviction of %s in the labelled namespace succeeded with the operator down", enforcedPod)
	} else {
		t.Logf("labelled namespace, operator down: refused: %v", err)
	}
	freePod := firstPod(ctx, t, k8s, "free")
	if err := fixture.Evict(ctx, cs, "free", freePod, false); err != nil {
		t.Errorf("eviction of %s in the unlabelled namespace with the operator down: %v, want it to succeed", freePod, err)
	} else {
		t.Logf("unlabelled namespace, operator down: evicted %s", freePod)
	}

	t.Log("the default scope, for contrast: with the operator down, the unlabelled namespace is refused too")
	cfg := restConfig(t, b.Cluster)
	fixture.Must(t, registration.Install(ctx, cfg, registration.Webhook{Host: "127.0.0.1", Port: operatorOptions.WebhookPort,
		CertDir: t.TempDir(), OperatorNamespace: "tdb-system", Scope: registration.ScopeAll}))
	freePod = firstPod(ctx, t, k8s, "free")
	if err := fixture.Evict(ctx, cs, "free", freePod, true); err == nil {
		t.Errorf("with the default scope and the operator down, the eviction of %s in an unlabelled namespace was allowed", freePod)
	} else {
		t.Logf("default scope, operator down, unlabelled namespace: refused: %v", err)
	}
}

func restConfig(t *testing.T, c *kwokenv.Cluster) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	fixture.Must(t, err)
	return cfg
}

// waitCondition waits until the namespace's budget is computed for its
// generation with the DisruptionAllowed reason, and returns the condition.
func waitCondition(ctx context.Context, t *testing.T, k8s client.Client, ns, reason string) metav1.Condition {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		var tdb policyv1alpha1.TopologyDisruptionBudget
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &tdb); err == nil {
			c := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed)
			if c != nil {
				last = fmt.Sprintf("%s: %s", c.Reason, c.Message)
				if c.Reason == reason && tdb.Status.ObservedGeneration == tdb.Generation && tdb.Status.ExpectedPods == 3 {
					return *c
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("budget %s/web never reported %s; last %s", ns, reason, last)
	return metav1.Condition{}
}

func firstPod(ctx context.Context, t *testing.T, k8s client.Client, ns string) string {
	t.Helper()
	for ctx.Err() == nil {
		var pods corev1.PodList
		fixture.Must(t, k8s.List(ctx, &pods, client.InNamespace(ns)))
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				return p.Name
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no running pod in %s", ns)
	return ""
}

func setLabel(ctx context.Context, t *testing.T, k8s client.Client, ns, value string) {
	t.Helper()
	var n corev1.Namespace
	fixture.Must(t, k8s.Get(ctx, client.ObjectKey{Name: ns}, &n))
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if value == "" {
		delete(n.Labels, enforce)
	} else {
		n.Labels[enforce] = value
	}
	fixture.Must(t, k8s.Update(ctx, &n))
}
