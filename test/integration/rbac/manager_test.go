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

package rbac_test

import (
	"context"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/certs"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
	rbactable "github.com/tdb-operator/tdb-operator/test/rbac"
)

// requestLog counts the requests a client sends and keeps those the API
// server refused (403).
type requestLog struct {
	mu      sync.Mutex
	sent    int
	refused []string
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.sent++
		if err == nil && resp.StatusCode == http.StatusForbidden {
			l.refused = append(l.refused, req.Method+" "+req.URL.RequestURI())
		}
		return resp, err
	})
}

func (l *requestLog) counts() (sent int, refused []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent, append([]string(nil), l.refused...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

var _ = Describe("The manager with its ServiceAccount's rights only", func() {
	It("fills the certificate Secret, injects the CA, leads, and keeps a mirrored budget's status, mirrors and pod labels, with no request refused", func() {
		log := &requestLog{}
		saCfg := as(operatorIdentity())
		saCfg.Wrap(log.wrap)
		ns := rbactable.Namespace

		By("the certificate rotation under leader election, as cmd/main.go wires it with --cert-rotation --leader-elect")
		rotation, err := certs.New(certs.Options{Namespace: ns, SecretName: certSecret, ServiceName: "tdb-webhook-service",
			WebhookConfigName: webhookConfig, CertDir: GinkgoT().TempDir(), RequireLeaderElection: true})
		Expect(err).NotTo(HaveOccurred())
		leader, err := ctrl.NewManager(saCfg, ctrl.Options{
			Scheme: framework.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
			LeaderElection: true, LeaderElectionID: leaseName, LeaderElectionNamespace: ns, LeaderElectionReleaseOnCancel: true,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(rotation.SetupWithManager(leader)).To(Succeed())
		lctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- leader.Start(lctx) }()
		DeferCleanup(func() {
			cancel()
			Eventually(done).Should(Receive(BeNil()))
		})
		Eventually(rotation.CAInjected()).Should(BeClosed(), "the CA injected")
		Eventually(rotation.Written()).Should(BeClosed(), "this replica's certificate files written from the Secret")
		var secret corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: certSecret}, &secret)).To(Succeed())
		Expect(secret.Data).To(HaveKey(corev1.TLSCertKey))
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		Expect(k8s.Get(ctx, client.ObjectKey{Name: webhookConfig}, &vwc)).To(Succeed())
		Expect(vwc.Webhooks[0].ClientConfig.CABundle).To(Equal(secret.Data["ca.crt"]))
		var lease coordinationv1.Lease
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, &lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).NotTo(BeNil())

		By("the controllers, as the binary runs them on the leader")
		op, err := framework.StartManagerWith(saCfg, framework.ManagerOptions{Clock: clock.RealClock{}, RecordTimeout: time.Minute,
			WebhookConfigName: webhookConfig})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(op.Stop)
		tenant, err := framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		zones := []string{"zone-a", "zone-b", "zone-c"}
		_, err = framework.NewWorld(ctx, k8s, tenant, "web", zones, 1, 2)
		Expect(err).NotTo(HaveOccurred())
		// A nodeSelectorTerm: the mirrors select by the operator's label,
		// which it writes on the pods.
		tdb := builders.Budget("web").Namespace(tenant).MatchLabels(map[string]string{"app": "web"}).TopologyKey(framework.ZoneKey).
			MaxUnavailable(intstr.FromInt32(1)).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
			{Key: framework.ZoneKey, Operator: "In", Values: zones}}}).Obj()
		tdb.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
		Expect(k8s.Create(ctx, tdb)).To(Succeed())
		mirrors := func() map[string]int32 {
			var list policyv1.PodDisruptionBudgetList
			Expect(k8s.List(ctx, &list, client.InNamespace(tenant),
				client.MatchingLabels{budget.MirrorBudgetLabel: budget.MirrorBudgetLabelValue(tdb.Name)})).To(Succeed())
			out := map[string]int32{}
			for _, p := range list.Items {
				out[p.Labels[budget.DomainLabel]] = p.Spec.MinAvailable.IntVal
			}
			return out
		}
		Eventually(mirrors).Should(Equal(map[string]int32{"zone-a": 1, "zone-b": 1, "zone-c": 1}), "mirrors created")
		Eventually(func() *metav1.Condition {
			var got policyv1alpha1.TopologyDisruptionBudget
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(tdb), &got)).To(Succeed())
			return apimeta.FindStatusCondition(got.Status.Conditions, policyv1alpha1.ConditionMirrored)
		}).Should(HaveField("Status", metav1.ConditionTrue), "the budget's status written")
		Eventually(func() []string {
			var pods corev1.PodList
			Expect(k8s.List(ctx, &pods, client.InNamespace(tenant))).To(Succeed())
			var domains []string
			for _, p := range pods.Items {
				domains = append(domains, p.Labels[budget.DomainLabel])
			}
			return domains
		}).Should(ConsistOf("zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c"), "pods labelled")

		By("a mirror updated, then every mirror deleted")
		Expect(framework.Modify(ctx, k8s, tdb, func() { tdb.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(2)) })).To(Succeed())
		Eventually(mirrors).Should(Equal(map[string]int32{"zone-a": 0, "zone-b": 0, "zone-c": 0}))
		Expect(framework.Modify(ctx, k8s, tdb, func() { tdb.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorNone })).To(Succeed())
		Eventually(mirrors).Should(BeEmpty())

		sent, refused := log.counts()
		AddReportEntry("requests sent as the ServiceAccount", sent)
		Expect(sent).To(BeNumerically(">", 0))
		Expect(refused).To(BeEmpty(), "the operator used a right its RBAC does not grant")
	})
})
