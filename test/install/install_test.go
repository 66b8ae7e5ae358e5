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

package install_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
	"github.com/tdb-operator/tdb-operator/test/rbac"
)

const (
	namespace     = rbac.Namespace
	crdName       = "topologydisruptionbudgets.policy.tdb.dev"
	webhookConfig = "tdb-validating-webhook-configuration"
	// testImage is what `make deploy IMG=...` must put in the Deployment.
	testImage = "example.invalid/tdb-operator:v0.0.0-install-test"
	// networkPolicy is the manager pods' NetworkPolicy, and ingressFile the
	// file of config/default that sets its rules.
	networkPolicy = "tdb-allow-webhook-traffic"
	ingressFile   = "manager-ingress.yaml"
)

func decode(stream []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

func yamlOf(u *unstructured.Unstructured) []byte {
	b, err := yaml.Marshal(u.Object)
	Expect(err).NotTo(HaveOccurred())
	return b
}

func describeObj(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
}

// typed converts the object of the given kind and name into out.
func typed(objs []*unstructured.Unstructured, kind, name string, out any) {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)).To(Succeed())
			return
		}
	}
	Fail(fmt.Sprintf("the build has no %s %s", kind, name))
}

// flagValue is the value of --name=value among args.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// dryRunEach applies every object alone with a server-side dry run and
// returns, per object, the error kubectl printed (empty: accepted) and any
// warning.
func dryRunEach(ctx SpecContext, objs []*unstructured.Unstructured) (refused, warnings map[string]string) {
	refused, warnings = map[string]string{}, map[string]string{}
	for _, u := range objs {
		out, errOut, err := fixture.Kubectl(ctx, cluster, yamlOf(u), "apply", "--dry-run=server", "-f", "-")
		name := describeObj(u)
		switch {
		case err != nil:
			refused[name] = strings.TrimSpace(errOut)
		case strings.TrimSpace(errOut) != "":
			warnings[name] = strings.TrimSpace(errOut)
		}
		if err == nil {
			Expect(out).To(ContainSubstring("(server dry run)"), "%s: %s", name, out)
		}
	}
	return refused, warnings
}

var _ = Describe("config/default", Ordered, func() {
	var (
		stream []byte
		objs   []*unstructured.Unstructured
		deploy appsv1.Deployment
	)
	BeforeAll(func() {
		stream = build("default")
		objs = objectsOf(stream)
		typed(objs, "Deployment", "tdb-operator", &deploy)
	})

	It("holds the objects of an install, which refer to each other by their built names", func() {
		var got []string
		for _, u := range objs {
			got = append(got, describeObj(u))
			if u.GetKind() != "Namespace" && u.GetKind() != "CustomResourceDefinition" && !strings.HasPrefix(u.GetKind(), "Cluster") && u.GetKind() != "ValidatingWebhookConfiguration" {
				Expect(u.GetNamespace()).To(Equal(namespace), describeObj(u))
			}
		}
		Expect(got).To(ConsistOf(
			"Namespace tdb-system",
			"CustomResourceDefinition "+crdName,
			"ServiceAccount tdb-system/tdb-operator",
			"Role tdb-system/tdb-manager-role",
			"ClusterRole tdb-manager-role",
			"RoleBinding tdb-system/tdb-manager-rolebinding",
			"ClusterRoleBinding tdb-manager-rolebinding",
			"Secret tdb-system/tdb-webhook-server-cert",
			"Service tdb-system/tdb-webhook-service",
			"Deployment tdb-system/tdb-operator",
			"PodDisruptionBudget tdb-system/tdb-operator",
			"NetworkPolicy tdb-system/"+networkPolicy,
			"ValidatingWebhookConfiguration "+webhookConfig,
		))

		pod := deploy.Spec.Template
		args := pod.Spec.Containers[0].Args
		var secret corev1.Secret
		typed(objs, "Secret", flagValue(args, "webhook-secret-name"), &secret)
		Expect(secret.Data).To(BeEmpty(), "the Secret must ship empty: the operator fills it")
		var svc corev1.Service
		typed(objs, "Service", flagValue(args, "webhook-service-name"), &svc)
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		typed(objs, "ValidatingWebhookConfiguration", flagValue(args, "webhook-config-name"), &vwc)
		var sa corev1.ServiceAccount
		typed(objs, "ServiceAccount", pod.Spec.ServiceAccountName, &sa)

		By("the Service reaches the manager's webhook port")
		Expect(labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels))).To(BeTrue())
		Expect(svc.Spec.Ports).To(HaveLen(1))
		Expect(pod.Spec.Containers[0].Ports).To(ContainElement(HaveField("Name", svc.Spec.Ports[0].TargetPort.StrVal)))
		port := svc.Spec.Ports[0].TargetPort.StrVal
		for _, p := range pod.Spec.Containers[0].Ports {
			if p.Name == port {
				Expect(flagValue(args, "webhook-port")).To(Equal(fmt.Sprint(p.ContainerPort)))
			}
		}

		By("the webhook configuration calls that Service and exempts the operator's namespace")
		Expect(vwc.Webhooks).To(HaveLen(1))
		ref := vwc.Webhooks[0].ClientConfig.Service
		Expect(ref).NotTo(BeNil())
		Expect([]string{ref.Namespace, ref.Name}).To(Equal([]string{namespace, svc.Name}))
		Expect(vwc.Webhooks[0].NamespaceSelector.MatchExpressions).To(ConsistOf(metav1.LabelSelectorRequirement{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{namespace},
		}))

		By("the NetworkPolicy selects the manager pods and admits the webhook port only, from the callers " + ingressFile + " sets")
		var np networkingv1.NetworkPolicy
		typed(objs, "NetworkPolicy", networkPolicy, &np)
		npSel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		Expect(err).NotTo(HaveOccurred())
		Expect(npSel.Matches(labels.Set(pod.Labels))).To(BeTrue())
		Expect(np.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}))
		Expect(np.Spec.Ingress).To(Equal(configuredIngress(filepath.Join(kwokenv.Root(), "config", "default"))))
		Expect(np.Spec.Ingress).To(HaveLen(1), "one rule: the webhook port")
		Expect(np.Spec.Ingress[0].Ports).To(Equal([]networkingv1.NetworkPolicyPort{webhookPort()}))
		Expect(svc.Spec.Ports[0].TargetPort).To(Equal(*webhookPort().Port), "the port the webhook Service sends to")

		By("the operator's PodDisruptionBudget covers its pods")
		var pdb policyv1.PodDisruptionBudget
		typed(objs, "PodDisruptionBudget", "tdb-operator", &pdb)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Matches(labels.Set(pod.Labels))).To(BeTrue())
		Expect(pdb.Spec.MinAvailable.IntValue()).To(Equal(1))

		By("RBAC: the table, and names that are the build's")
		var r rbac.Objects
		Expect(rbac.Parse(stream, &r)).To(Succeed())
		table := rbac.Format(r.Table())
		AddReportEntry("RBAC of kustomize build config/default", table)
		Expect(r.Check(rbac.Expected, namespace)).To(BeEmpty())
		Expect(r.ServiceAccounts[0].Name).To(Equal(sa.Name))
		for _, row := range r.Table() {
			switch row.Resource {
			case "secrets":
				if row.Names != "" {
					Expect(row.Names).To(Equal(secret.Name))
				}
			case "validatingwebhookconfigurations":
				if row.Names != "" {
					Expect(row.Names).To(Equal(vwc.Name))
				}
			}
		}
	})

	It("runs two hardened replicas that serve the webhook while only the leader runs the controllers", func() {
		Expect(deploy.Spec.Replicas).To(HaveValue(BeEquivalentTo(2)))
		spec := deploy.Spec.Template.Spec
		Expect(spec.Containers).To(HaveLen(1))
		c := spec.Containers[0]
		Expect(c.Args).To(ContainElements("--leader-elect", "--cert-rotation=true"))

		By("the pod and container security contexts")
		Expect(spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
		Expect(spec.SecurityContext.SeccompProfile).To(HaveValue(HaveField("Type", corev1.SeccompProfileTypeRuntimeDefault)))
		Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
		Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
		Expect(c.SecurityContext.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
		Expect(c.SecurityContext.Capabilities.Add).To(BeEmpty())

		By("resources, probes on the probe port, the namespace from the downward API")
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			Expect(c.Resources.Requests).To(HaveKey(res))
			Expect(c.Resources.Limits).To(HaveKey(res))
		}
		probePort := strings.TrimPrefix(flagValue(c.Args, "health-probe-bind-address"), ":")
		for probe, path := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
			Expect(probe).NotTo(BeNil())
			Expect(probe.HTTPGet.Path).To(Equal(path))
			Expect(c.Ports).To(ContainElement(And(HaveField("Name", probe.HTTPGet.Port.StrVal), HaveField("ContainerPort", BeEquivalentTo(mustAtoi(probePort))))))
		}
		Expect(c.Env).To(ContainElement(And(HaveField("Name", "POD_NAMESPACE"),
			HaveField("ValueFrom.FieldRef.FieldPath", "metadata.namespace"))))

		By("a writable certificate directory on the read-only root filesystem")
		certDir := flagValue(c.Args, "webhook-cert-dir")
		Expect(c.VolumeMounts).To(ContainElement(HaveField("MountPath", certDir)))
		for _, m := range c.VolumeMounts {
			if m.MountPath == certDir {
				Expect(spec.Volumes).To(ContainElement(And(HaveField("Name", m.Name), HaveField("EmptyDir", Not(BeNil())))))
			}
		}

		By("the replicas spread over nodes")
		Expect(spec.TopologySpreadConstraints).To(ContainElement(And(
			HaveField("TopologyKey", "kubernetes.io/hostname"),
			HaveField("WhenUnsatisfiable", corev1.DoNotSchedule),
			HaveField("MaxSkew", BeEquivalentTo(1)))))
	})

	It("is refused by a dry run on a fresh cluster only where its namespace does not exist yet (a dry run creates nothing)", func(ctx SpecContext) {
		refused, warnings := dryRunEach(ctx, objs)
		Expect(warnings).To(BeEmpty())
		for _, u := range objs {
			if u.GetNamespace() == "" {
				Expect(refused).NotTo(HaveKey(describeObj(u)))
			} else {
				Expect(refused).To(HaveKeyWithValue(describeObj(u), ContainSubstring(`namespaces "tdb-system" not found`)))
			}
		}
	})

	It("is accepted object by object by the API server's server-side dry run once the namespace exists, with no warning", func(ctx SpecContext) {
		for _, u := range objs {
			if u.GetKind() == "Namespace" {
				_, errOut, err := fixture.Kubectl(ctx, cluster, yamlOf(u), "apply", "-f", "-")
				Expect(err).NotTo(HaveOccurred(), errOut)
				Expect(errOut).To(BeEmpty())
			}
		}
		refused, warnings := dryRunEach(ctx, objs)
		Expect(refused).To(BeEmpty())
		// The namespace enforces and warns on Pod Security "restricted": a
		// manager pod that broke it would be named here.
		Expect(warnings).To(BeEmpty())

		By("kustomize build config/default | kubectl apply --dry-run=server -f -")
		out, errOut, err := fixture.Kubectl(ctx, cluster, stream, "apply", "--dry-run=server", "-f", "-")
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(errOut).To(BeEmpty())
		accepted := strings.Count(out, "(server dry run)")
		report := fmt.Sprintf("%s%d of %d objects accepted", out, accepted, len(objs))
		AddReportEntry("kustomize build config/default | kubectl apply --dry-run=server -f -", report)
		Expect(accepted).To(Equal(len(objs)))
	})

	It("restricts the webhook port to the range set in "+ingressFile+", and the API server accepts the policy", func(ctx SpecContext) {
		// A copy of config/ whose webhook rule admits a control plane on
		// 10.1.2.0/24 only: what a user edits in manager-ingress.yaml.
		dir := GinkgoT().TempDir()
		Expect(exec.Command("cp", "-R", filepath.Join(kwokenv.Root(), "config"), dir).Run()).To(Succeed())
		edited := filepath.Join(dir, "config", "default", ingressFile)
		raw, err := os.ReadFile(edited)
		Expect(err).NotTo(HaveOccurred())
		var settings map[string]any
		Expect(yaml.Unmarshal(raw, &settings)).To(Succeed())
		rules := settings["ingress"].([]any)
		Expect(rules).To(HaveLen(1))
		rules[0].(map[string]any)["from"] = []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.1.2.0/24"}}}
		out, err := yaml.Marshal(settings)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(edited, out, 0o600)).To(Succeed())

		narrowed := objectsOf(buildDir(filepath.Join(dir, "config", "default")))
		Expect(narrowed).To(HaveLen(len(objs)))
		var np networkingv1.NetworkPolicy
		typed(narrowed, "NetworkPolicy", networkPolicy, &np)
		Expect(np.Spec.Ingress).To(Equal([]networkingv1.NetworkPolicyIngressRule{{
			From:  []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.1.2.0/24"}}},
			Ports: []networkingv1.NetworkPolicyPort{webhookPort()},
		}}))
		for _, u := range narrowed {
			if u.GetKind() == "NetworkPolicy" {
				refused, warnings := dryRunEach(ctx, []*unstructured.Unstructured{u})
				Expect(refused).To(BeEmpty())
				Expect(warnings).To(BeEmpty())
			}
		}
	})

	It("with the cert-manager overlay, which hands the certificate to cert-manager", func(ctx SpecContext) {
		cm := objectsOf(build("certmanager"))
		var d appsv1.Deployment
		typed(cm, "Deployment", "tdb-operator", &d)
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.Args).To(ContainElement("--cert-rotation=false"))
		Expect(c.Args).NotTo(ContainElement("--cert-rotation=true"))
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		typed(cm, "ValidatingWebhookConfiguration", webhookConfig, &vwc)
		Expect(vwc.Annotations).To(HaveKeyWithValue("cert-manager.io/inject-ca-from", namespace+"/tdb-serving-cert"))
		Expect(d.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("Secret.SecretName", "tdb-webhook-server-cert")))
		var kinds []string
		for _, u := range cm {
			kinds = append(kinds, u.GetKind())
		}
		Expect(kinds).NotTo(ContainElement("Secret"), "cert-manager creates the Secret")
		Expect(kinds).To(ContainElements("Issuer", "Certificate"))

		// cert-manager is not installed here: its two objects are refused
		// for their unknown kinds, and only they.
		refused, warnings := dryRunEach(ctx, cm)
		Expect(warnings).To(BeEmpty())
		Expect(refused).To(HaveLen(2))
		for name, msg := range refused {
			Expect(name).To(Or(HavePrefix("Issuer "), HavePrefix("Certificate ")))
			Expect(msg).To(ContainSubstring("no matches for kind"))
		}
	})

	It("with the labelled-scope overlay, whose webhook decides only namespaces labelled policy.tdb.dev/enforce=true", func(ctx SpecContext) {
		objs := objectsOf(build("scope-labelled"))
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		typed(objs, "ValidatingWebhookConfiguration", webhookConfig, &vwc)
		Expect(vwc.Webhooks).To(HaveLen(1))
		sel := vwc.Webhooks[0].NamespaceSelector
		Expect(sel).NotTo(BeNil())
		Expect(sel.MatchLabels).To(Equal(map[string]string{"policy.tdb.dev/enforce": "true"}))
		Expect(sel.MatchExpressions).To(ConsistOf(metav1.LabelSelectorRequirement{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{namespace}}),
			"the operator's own namespace stays exempt")
		// Everything else is config/default's.
		def := objectsOf(build("default"))
		Expect(objs).To(HaveLen(len(def)))
		refused, warnings := dryRunEach(ctx, objs)
		Expect(refused).To(BeEmpty())
		Expect(warnings).To(BeEmpty())
	})

	It("is installed by make deploy: CRD Established, RBAC in place, two replicas on two nodes, the operator's own budget", func(ctx SpecContext) {
		out := makeTarget(ctx, "deploy", "IMG="+testImage)
		GinkgoWriter.Printf("make deploy:\n%s\n", out)

		Eventually(func(g Gomega) {
			var crd apiextensionsv1.CustomResourceDefinition
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: crdName}, &crd)).To(Succeed())
			g.Expect(crd.Status.Conditions).To(ContainElement(And(
				HaveField("Type", apiextensionsv1.Established), HaveField("Status", apiextensionsv1.ConditionTrue))))
		}).Should(Succeed())
		for _, obj := range []client.Object{
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "tdb-operator"}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tdb-manager-role"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tdb-manager-rolebinding"}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "tdb-manager-role"}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "tdb-manager-rolebinding"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "tdb-webhook-server-cert"}},
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhookConfig}},
			&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: networkPolicy}},
		} {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed(), "%T %s", obj, obj.GetName())
		}

		By("the Deployment runs IMG; kwok reports its pods Running and Ready without running them")
		var d appsv1.Deployment
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tdb-operator"}, &d)).To(Succeed())
		Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(testImage))
		Eventually(func(g Gomega) {
			pods := operatorPods(ctx, g)
			g.Expect(pods).To(HaveLen(2))
			nodes := map[string]bool{}
			for _, p := range pods {
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
				nodes[p.Spec.NodeName] = true
			}
			g.Expect(nodes).To(HaveLen(2), "the scheduler put both replicas on one node")
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			var pdb policyv1.PodDisruptionBudget
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tdb-operator"}, &pdb)).To(Succeed())
			g.Expect(pdb.Status.CurrentHealthy).To(BeEquivalentTo(2))
			g.Expect(pdb.Status.DisruptionsAllowed).To(BeEquivalentTo(1))
		}).Should(Succeed())
	})

	It("keeps what the operator wrote, the certificate Secret and the CA bundle, when make deploy runs again (an upgrade)", func(ctx SpecContext) {
		// What the operator would have written, as no container runs here.
		var secret corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tdb-webhook-server-cert"}, &secret)).To(Succeed())
		secret.Data = map[string][]byte{"ca.crt": []byte("ca"), "tls.crt": []byte("crt"), "tls.key": []byte("key")}
		Expect(k8s.Update(ctx, &secret)).To(Succeed())
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		Expect(k8s.Get(ctx, client.ObjectKey{Name: webhookConfig}, &vwc)).To(Succeed())
		vwc.Webhooks[0].ClientConfig.CABundle = []byte("ca")
		Expect(k8s.Update(ctx, &vwc)).To(Succeed())

		makeTarget(ctx, "deploy", "IMG="+testImage)

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&secret), &secret)).To(Succeed())
		Expect(secret.Data).To(HaveLen(3), "re-applying the install wiped the certificate")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&vwc), &vwc)).To(Succeed())
		Expect(vwc.Webhooks[0].ClientConfig.CABundle).To(Equal([]byte("ca")), "re-applying the install wiped the CA bundle")
	})

	It("runs the real manager with no more rights than its ServiceAccount's: it fills the Secret, injects the CA, leads and becomes Ready", func(ctx SpecContext) {
		// The manager runs here as a local process, impersonating the
		// installed ServiceAccount, since no container runs on kwok. It
		// finds the Secret as the previous spec left it (not a key pair)
		// and must replace it.
		mgr := startManagerAs("system:serviceaccount:" + namespace + ":tdb-operator")
		DeferCleanup(mgr.Stop)
		Eventually(mgr.Ready, "60s").Should(Succeed(), "see %s", mgr.LogPath)

		var secret corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tdb-webhook-server-cert"}, &secret)).To(Succeed())
		Expect(secret.Data).To(HaveKey("tls.key"))
		caPEM := secret.Data["ca.crt"]
		Expect(string(caPEM)).To(HavePrefix("-----BEGIN CERTIFICATE-----"))
		Eventually(func(g Gomega) {
			var vwc admissionregistrationv1.ValidatingWebhookConfiguration
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: webhookConfig}, &vwc)).To(Succeed())
			g.Expect(vwc.Webhooks[0].ClientConfig.CABundle).To(Equal(caPEM))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			var lease coordinationv1.Lease
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tdb-operator.policy.tdb.dev"}, &lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		}).Should(Succeed())
		served := mgr.servedCertificate()
		Expect(pemOf(served)).To(Equal(string(secret.Data["tls.crt"])))
		log, err := os.ReadFile(mgr.LogPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).NotTo(ContainSubstring("forbidden"), "the manager was refused something its RBAC should grant; see %s", mgr.LogPath)
	})

	It("with --webhook-client-ca-name, answers only callers that present a certificate that CA signed: a pod cannot forge an admission request", func(ctx SpecContext) {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		typed(objs, "ValidatingWebhookConfiguration", webhookConfig, &vwc)
		ref := vwc.Webhooks[0].ClientConfig.Service
		serverName := ref.Name + "." + ref.Namespace + ".svc"

		By("a client CA named like a file the certificate rotation writes is refused at start")
		bin, err := kwokenv.BuildManager()
		Expect(err).NotTo(HaveOccurred())
		out, err := exec.CommandContext(ctx, bin, "--cert-rotation=true", "--webhook-client-ca-name=ca.crt").CombinedOutput()
		Expect(err).To(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring("names a file --cert-rotation writes"))

		apiServerCA := newTestCA("kube-apiserver webhook clients")
		mgr := startManagerAs("system:serviceaccount:"+namespace+":tdb-operator", withClientCA(apiServerCA.pem))
		DeferCleanup(mgr.Stop)
		Eventually(mgr.Ready, "60s").Should(Succeed(), "see %s", mgr.LogPath)
		var secret corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tdb-webhook-server-cert"}, &secret)).To(Succeed())
		servingCA := secret.Data["ca.crt"]
		// An eviction in the operator's namespace: answered "allowed" without
		// touching any budget, so the answer shows only that the call got in.
		review := evictionReview(namespace, "tdb-operator-0", "install-test")

		By("no client certificate: the TLS handshake is refused, no answer")
		_, err = mgr.post(*ref.Path, review, servingCA, serverName, nil)
		Expect(err).To(MatchError(ContainSubstring("remote error: tls:")))

		By("a client certificate signed by another CA: refused, no answer")
		forged := newTestCA("someone else").clientCertificate("kube-apiserver")
		_, err = mgr.post(*ref.Path, review, servingCA, serverName, &forged)
		Expect(err).To(MatchError(ContainSubstring("remote error: tls:")))

		By("the API server's client certificate: answered")
		apiServer := apiServerCA.clientCertificate("kube-apiserver")
		body, err := mgr.post(*ref.Path, review, servingCA, serverName, &apiServer)
		Expect(err).NotTo(HaveOccurred())
		var answer admissionv1.AdmissionReview
		Expect(json.Unmarshal(body, &answer)).To(Succeed())
		Expect(answer.Response).NotTo(BeNil())
		Expect(answer.Response.UID).To(Equal(types.UID("install-test")))
		Expect(answer.Response.Allowed).To(BeTrue(), "%s", body)
	})

	// No eviction outside the operator's namespace here: with the webhook
	// registered, the API server would call the webhook Service's cluster
	// IP, an address on no network of this machine. Evictions in the
	// operator's namespace never call the webhook (namespaceSelector).
	It("lets an operator pod be evicted under the operator's own PodDisruptionBudget only: its namespace is exempt from the webhook", func(ctx SpecContext) {
		var pods []corev1.Pod
		Eventually(func(g Gomega) { pods = operatorPods(ctx, g); g.Expect(pods).To(HaveLen(2)) }).Should(Succeed())
		Expect(k8s.SubResource("eviction").Create(ctx, &pods[0], &policyv1.Eviction{})).To(Succeed())
		// The budget now has no disruption left until the replacement is
		// Ready: the second eviction is refused by the PDB, with a 429.
		err := k8s.SubResource("eviction").Create(ctx, &pods[1], &policyv1.Eviction{})
		Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "want the PDB's 429, got %v", err)
		Eventually(func(g Gomega) {
			var pdb policyv1.PodDisruptionBudget
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "tdb-operator"}, &pdb)).To(Succeed())
			g.Expect(pdb.Status.CurrentHealthy).To(BeEquivalentTo(2))
		}).Should(Succeed())
	})

	It("is removed by make undeploy: the webhook configuration first, then the rest, CRD included", func(ctx SpecContext) {
		out := makeTarget(ctx, "undeploy")
		GinkgoWriter.Printf("make undeploy:\n%s\n", out)
		first := strings.Index(out, "validatingwebhookconfiguration.admissionregistration.k8s.io \""+webhookConfig+"\" deleted")
		Expect(first).To(BeNumerically(">=", 0), "the webhook configuration was not deleted")
		Expect(first).To(BeNumerically("<", strings.Index(out, "deployment.apps \"tdb-operator\" deleted")), "the webhook configuration must go before the operator")
		for _, obj := range []client.Object{
			&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tdb-manager-role"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tdb-manager-rolebinding"}},
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhookConfig}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		} {
			Eventually(func() bool {
				return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj))
			}).Should(BeTrue(), "%T %s is still there", obj, obj.GetName())
		}
	})
})

// configuredIngress is the ingress rules the manager-ingress file of the
// kustomization in dir sets for the manager pods' NetworkPolicy.
func configuredIngress(dir string) []networkingv1.NetworkPolicyIngressRule {
	raw, err := os.ReadFile(filepath.Join(dir, ingressFile))
	Expect(err).NotTo(HaveOccurred())
	var settings struct {
		Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress"`
	}
	Expect(yaml.Unmarshal(raw, &settings)).To(Succeed())
	Expect(settings.Ingress).NotTo(BeEmpty())
	return settings.Ingress
}

// webhookPort is the manager's webhook port, by the container port's name.
func webhookPort() networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString("webhook-server"))}
}

// buildDir runs the pinned kustomize on a directory.
func buildDir(dir string) []byte {
	cmd := exec.Command(kustomize, "build", dir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	Expect(cmd.Run()).To(Succeed(), "kustomize build %s: %s", dir, errOut.String())
	return out.Bytes()
}

// evictionReview is the AdmissionReview the API server sends the webhook for
// an eviction of the pod ns/name.
func evictionReview(ns, name, uid string) []byte {
	eviction, err := json.Marshal(policyv1.Eviction{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	})
	Expect(err).NotTo(HaveOccurred())
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:         types.UID(uid),
			Kind:        metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"},
			Resource:    metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			SubResource: "eviction",
			Namespace:   ns,
			Name:        name,
			Operation:   admissionv1.Create,
			Object:      runtime.RawExtension{Raw: eviction},
		},
	})
	Expect(err).NotTo(HaveOccurred())
	return review
}

func operatorPods(ctx SpecContext, g Gomega) []corev1.Pod {
	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{"control-plane": "tdb-operator"})).To(Succeed())
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

func mustAtoi(s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	Expect(err).NotTo(HaveOccurred(), "not a port: %q", s)
	return n
}
