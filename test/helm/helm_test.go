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

// Package helm_test installs tdb-operator with the real helm (HELM, built by
// `make helm-binary`) from the committed chart, dist/chart, on a fresh local
// kwok cluster (tdb-helm, API server on port 16543, so it runs next to the
// install suite's tdb-install on 16443): helm install under another name and
// namespace (fullnameOverride), the real manager run as a local process with
// the installed ServiceAccount's rights and the installed Deployment's flags
// (no container runs on kwok), helm upgrade (the certificate Secret and the
// CA bundle the operator wrote are kept), helm uninstall.
//
// Run: make test-helm-install. TDB_HELM_KEEP_CLUSTER=1 leaves the cluster up.
package helm_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	clusterName   = "tdb-helm"
	apiServerPort = 16543
	release       = "ops"
	namespace     = "tdb-ops"
	// fullname is the chart's fullnameOverride here: every name must follow it.
	fullname  = "acme"
	testImage = "example.invalid/tdb-operator:v0.0.0-test"
)

var (
	cluster *kwokenv.Cluster
	k8s     client.Client
	helm    string
)

func TestHelmInstall(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "tdb-operator Helm chart (helm install/upgrade/uninstall on a kwok cluster)")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	helm = os.Getenv("HELM")
	Expect(helm).NotTo(BeEmpty(), "HELM must name the pinned helm: run `make test-helm-install`")
	Expect(helm).To(BeAnExistingFile())

	By(fmt.Sprintf("bringing up a fresh cluster %s (2 zones x 1 node, API server on port %d)", clusterName, apiServerPort))
	cluster = fixture.FreshCluster(clusterName, fmt.Sprintf("KUBE_APISERVER_PORT=%d", apiServerPort), "ZONES=2", "NODES_PER_ZONE=1")
	var err error
	k8s, err = kwokenv.NewClient(cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
}, NodeTimeout(10*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	fixture.TearDown(cluster, "TDB_HELM_KEEP_CLUSTER", false)
}, NodeTimeout(5*time.Minute))

// helmRun runs the pinned helm against the cluster and returns its output.
func helmRun(ctx context.Context, args ...string) string {
	cmd := exec.CommandContext(ctx, helm, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig, "HELM_CACHE_HOME="+GinkgoT().TempDir(),
		"HELM_CONFIG_HOME="+GinkgoT().TempDir(), "HELM_DATA_HOME="+GinkgoT().TempDir())
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "helm %v:\n%s", args, out)
	return string(out)
}

// extraArgs are flags the install adds through the chart's extraArgs: the
// manager run below with the installed flags must accept them.
var extraArgs = []string{"--kube-api-qps=100", "--kube-api-burst=200", "--record-timeout=25s", "--status-workers=8"}

func chartValues() []string {
	repo, tag, _ := strings.Cut(testImage, ":v")
	return []string{"--set", "fullnameOverride=" + fullname, "--set", "image.repository=" + repo, "--set", "image.tag=v" + tag,
		"--set-json", `extraArgs=["` + strings.Join(extraArgs, `","`) + `"]`}
}

var _ = Describe("the Helm chart", Ordered, func() {
	var (
		secretKey  = client.ObjectKey{Namespace: namespace, Name: fullname + "-webhook-server-cert"}
		webhookKey = client.ObjectKey{Name: fullname + "-validating-webhook-configuration"}
	)

	It("is installed by helm install under its fullname, and prints how to check it works", func(ctx SpecContext) {
		out := helmRun(ctx, append([]string{"install", release, filepath.Join(kwokenv.Root(), "dist", "chart"),
			"--namespace", namespace, "--create-namespace", "--wait", "--timeout", "3m"}, chartValues()...)...)
		Expect(out).To(ContainSubstring("kubectl get tdb -A"))
		Expect(out).To(ContainSubstring("--dry-run=server"))
		Expect(out).To(ContainSubstring("rollout status deploy/" + fullname + "-operator"))

		var dep appsv1.Deployment
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: fullname + "-operator"}, &dep)).To(Succeed())
		Expect(dep.Status.ReadyReplicas).To(BeEquivalentTo(2))
		Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(testImage))
		Expect(dep.Spec.Template.Spec.Containers[0].Args).To(ContainElements(extraArgs), "the chart's extraArgs are not the manager's flags")
		var secret corev1.Secret
		Expect(k8s.Get(ctx, secretKey, &secret)).To(Succeed())
		Expect(secret.Data).To(BeEmpty())
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		Expect(k8s.Get(ctx, webhookKey, &vwc)).To(Succeed())
		Expect(vwc.Webhooks[0].ClientConfig.Service.Name).To(Equal(fullname + "-webhook-service"))
		Expect(vwc.Webhooks[0].ClientConfig.Service.Namespace).To(Equal(namespace))
		Expect(vwc.Webhooks[0].NamespaceSelector.MatchExpressions[0].Values).To(Equal([]string{namespace}))
	})

	It("runs the real manager with the installed flags and no more rights than the installed ServiceAccount's: it fills the Secret, injects the CA, leads and becomes Ready", func(ctx SpecContext) {
		var dep appsv1.Deployment
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: fullname + "-operator"}, &dep)).To(Succeed())
		mgr := startManager("system:serviceaccount:"+namespace+":"+dep.Spec.Template.Spec.ServiceAccountName,
			dep.Spec.Template.Spec.Containers[0].Args)
		DeferCleanup(mgr.Stop)
		Eventually(mgr.Ready, "60s").Should(Succeed(), "see %s", mgr.LogPath)

		var secret corev1.Secret
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, secretKey, &secret)).To(Succeed())
			g.Expect(secret.Data).To(HaveKey("tls.key"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			var vwc admissionregistrationv1.ValidatingWebhookConfiguration
			g.Expect(k8s.Get(ctx, webhookKey, &vwc)).To(Succeed())
			g.Expect(vwc.Webhooks[0].ClientConfig.CABundle).To(Equal(secret.Data["ca.crt"]))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			var lease coordinationv1.Lease
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tdb-operator.policy.tdb.dev"}, &lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		}).Should(Succeed())
		By("the status controller runs as many workers as --status-workers says")
		Eventually(func(g Gomega) {
			g.Expect(mgr.metrics()).To(ContainSubstring(`controller_runtime_max_concurrent_reconciles{controller="topologydisruptionbudget"} 8` + "\n"))
		}).Should(Succeed())
		log, err := os.ReadFile(mgr.LogPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).NotTo(ContainSubstring("forbidden"), "the manager was refused something the chart's RBAC should grant; see %s", mgr.LogPath)
	})

	It("keeps the certificate Secret and the CA bundle the operator wrote across helm upgrade", func(ctx SpecContext) {
		var before corev1.Secret
		Expect(k8s.Get(ctx, secretKey, &before)).To(Succeed())
		Expect(before.Data).To(HaveKey("tls.crt"))
		var vwcBefore admissionregistrationv1.ValidatingWebhookConfiguration
		Expect(k8s.Get(ctx, webhookKey, &vwcBefore)).To(Succeed())

		helmRun(ctx, append([]string{"upgrade", release, filepath.Join(kwokenv.Root(), "dist", "chart"),
			"--namespace", namespace, "--wait", "--timeout", "3m", "--set", "replicas=3", "--set", "podAnnotations.upgraded=yes"}, chartValues()...)...)

		var dep appsv1.Deployment
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: fullname + "-operator"}, &dep)).To(Succeed())
		Expect(dep.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)), "the upgrade did not apply")
		Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue("upgraded", "yes"))
		var after corev1.Secret
		Expect(k8s.Get(ctx, secretKey, &after)).To(Succeed())
		Expect(after.Data).To(Equal(before.Data), "helm upgrade changed the certificate Secret")
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		Expect(k8s.Get(ctx, webhookKey, &vwc)).To(Succeed())
		Expect(vwc.Webhooks[0].ClientConfig.CABundle).To(Equal(vwcBefore.Webhooks[0].ClientConfig.CABundle), "helm upgrade wiped the CA bundle")
	})

	It("is removed by helm uninstall, the webhook configuration included; the CRD stays (Helm never deletes crds/)", func(ctx SpecContext) {
		helmRun(ctx, "uninstall", release, "--namespace", namespace, "--wait", "--timeout", "3m")
		for _, obj := range []client.Object{
			&admissionregistrationv1.ValidatingWebhookConfiguration{}, &appsv1.Deployment{}, &corev1.Secret{}, &corev1.ServiceAccount{},
		} {
			key := client.ObjectKey{Namespace: namespace, Name: fullname + "-operator"}
			switch obj.(type) {
			case *admissionregistrationv1.ValidatingWebhookConfiguration:
				key = webhookKey
			case *corev1.Secret:
				key = secretKey
			}
			Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, key, obj)) }).Should(BeTrue(), "%T %s is still there", obj, key)
		}
		out, _, err := fixture.Kubectl(ctx, cluster, nil, "get", "crd", "topologydisruptionbudgets.policy.tdb.dev", "-o", "name")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("topologydisruptionbudgets.policy.tdb.dev"))
	})
})

// manager is the manager run as a local process, impersonating the
// installed ServiceAccount, and the URL of its metrics.
type manager struct {
	*fixture.Manager
	metricz string
}

// startManager runs the manager with the installed Deployment's flags, but
// listening on free loopback ports and with a local certificate directory.
func startManager(user string, installed []string) *manager {
	dir := GinkgoT().TempDir()
	local := map[string]string{
		"--webhook-port": fmt.Sprint(fixture.FreePort()), "--health-probe-bind-address": fmt.Sprintf("127.0.0.1:%d", fixture.FreePort()),
		"--metrics-bind-address": fmt.Sprintf("127.0.0.1:%d", fixture.FreePort()), "--webhook-cert-dir": filepath.Join(dir, "certs"),
	}
	// Out of a cluster, the manager needs to be told the Lease's namespace.
	args := []string{"--webhook-host=127.0.0.1", "--leader-election-namespace=" + namespace}
	for _, a := range installed {
		name, _, _ := strings.Cut(a, "=")
		if v, ok := local[name]; ok {
			a = name + "=" + v
		}
		args = append(args, a)
	}
	return &manager{
		Manager: fixture.StartManager(cluster, fixture.ManagerOptions{User: user, Namespace: namespace, Dir: dir,
			Args: args, ProbeAddr: local["--health-probe-bind-address"]}),
		metricz: "http://" + local["--metrics-bind-address"] + "/metrics",
	}
}

// metrics returns what the manager's metrics endpoint serves.
func (m *manager) metrics() (string, error) {
	resp, err := http.Get(m.metricz) //nolint:noctx // a local scrape
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("metrics: %s", resp.Status)
	}
	return string(body), nil
}
