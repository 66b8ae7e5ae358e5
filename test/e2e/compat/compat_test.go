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

package compat_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	namespace = "tdb-system"
	crdName   = "topologydisruptionbudgets.policy.tdb.dev"
	app       = "ingester"
	// perZone pods of app in each zone, two on each of the zone's two
	// nodes.
	perZone = 4
	// podTopologyLabelsByDefault is the first minor whose API server copies
	// a node's zone and region labels onto each pod it binds
	// (PodTopologyLabelsAdmission: alpha, off, in 1.33; on by default from
	// 1.35).
	podTopologyLabelsByDefault = 35
)

// run runs a command with stdin and returns its stdout and stderr.
func run(ctx context.Context, stdin []byte, name string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// document is one object of a YAML stream.
type document struct {
	Kind string
	Raw  []byte
}

// documents splits a YAML stream into its objects.
func documents(stream []byte) []document {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var docs []document
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		Expect(err).NotTo(HaveOccurred())
		var obj struct{ Kind string }
		Expect(yaml.Unmarshal(raw, &obj)).To(Succeed())
		if obj.Kind != "" {
			docs = append(docs, document{Kind: obj.Kind, Raw: raw})
		}
	}
}

// expectDryRunAccepts applies stream with a server-side dry run of the
// minor's kubectl and expects every object accepted, with no warning (a
// deprecated API or a Pod Security violation would print one).
func expectDryRunAccepts(ctx context.Context, what string, stream []byte) {
	docs := documents(stream)
	Expect(docs).To(ContainElement(HaveField("Kind", "CustomResourceDefinition")), "%s holds the CRD", what)
	out, errOut, err := run(ctx, stream, kubectl, "apply", "--dry-run=server", "-f", "-")
	Expect(err).NotTo(HaveOccurred(), "%s refused by Kubernetes %s:\n%s", what, version, errOut)
	Expect(strings.TrimSpace(errOut)).To(BeEmpty(), "%s: warnings from Kubernetes %s", what, version)
	Expect(strings.Count(out, "(server dry run)")).To(Equal(len(docs)), "%s: objects accepted:\n%s", what, out)
	AddReportEntry(fmt.Sprintf("%s | kubectl apply --dry-run=server -f - (Kubernetes %s)", what, version), out)
}

var _ = Describe("tdb-operator on the Kubernetes minor under test", Ordered, func() {
	It("has its installs accepted by the API server in a server-side dry run: config/default, and the Helm chart with its CRD", func(ctx SpecContext) {
		By("kustomize build config/default")
		stream, errOut, err := run(ctx, nil, kustomize, "build", filepath.Join(kwokenv.Root(), "config", "default"))
		Expect(err).NotTo(HaveOccurred(), errOut)
		// A dry run creates nothing: the namespaced objects need their
		// namespace, which an install creates first. The CRD is not
		// installed yet (the operator installs it in the next specs), so
		// its dry run is a create, which checks every validation rule
		// against the CEL cost limit.
		By("creating the namespace " + namespace + " as config/default makes it, then the dry run")
		for _, d := range documents([]byte(stream)) {
			if d.Kind == "Namespace" {
				_, errOut, err := run(ctx, d.Raw, kubectl, "apply", "-f", "-")
				Expect(err).NotTo(HaveOccurred(), errOut)
			}
		}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{})).To(Succeed(), "config/default has the namespace")
		Expect(k8s.Get(ctx, client.ObjectKey{Name: crdName}, &apiextensionsv1.CustomResourceDefinition{})).To(
			WithTransform(apierrors.IsNotFound, BeTrue()), "the CRD is not installed yet: its dry run is a create")
		expectDryRunAccepts(ctx, "kustomize build config/default", []byte(stream))

		By("helm template dist/chart --include-crds --kube-version " + version)
		chart, errOut, err := run(ctx, nil, helm, "template", "tdb", filepath.Join(kwokenv.Root(), "dist", "chart"),
			"--namespace", namespace, "--include-crds", "--kube-version", version,
			"--set", "image.repository=example.invalid/tdb-operator", "--set", "image.tag=v0.0.0-compat")
		Expect(err).NotTo(HaveOccurred(), "helm template (the chart's kubeVersion against %s):\n%s", version, errOut)
		expectDryRunAccepts(ctx, "helm template dist/chart --include-crds", []byte(chart))
	})

	Describe("with the operator, and a budget with mirrored PDBs over 3 zones x 4 pods", Ordered, func() {
		var p *fixture.Pool
		BeforeAll(func(ctx SpecContext) {
			By("starting the operator (a local process, its webhook registered by URL, the CRD installed)")
			var err error
			op, err = kwokenv.StartOperator(cluster, operatorOptions)
			Expect(err).NotTo(HaveOccurred())
			p = fixture.NewPool(ctx, fixture.Env{Cluster: cluster, Client: k8s, Clientset: cs}, "compat", "compat", 2)
			createStatefulSets(ctx, p)
			p.WaitPodsReady(ctx, app, 3*perZone)
		}, NodeTimeout(5*time.Minute))

		It("gives each pod the zone label its mirror selects by: the API server from 1.35 (PodTopologyLabels), before that the operator, one write per pod, counted", func(ctx SpecContext) {
			var pods corev1.PodList
			Expect(k8s.List(ctx, &pods, client.InNamespace(p.NS))).To(Succeed())
			labelled := 0
			for _, pod := range pods.Items {
				if _, ok := pod.Labels[kwokenv.ZoneKey]; ok {
					labelled++
				}
			}
			if minor >= podTopologyLabelsByDefault {
				Expect(labelled).To(Equal(len(pods.Items)), "Kubernetes %s labels each pod it binds with its node's zone", version)
			} else {
				Expect(labelled).To(BeZero(), "Kubernetes %s does not label pods with their node's zone", version)
			}

			createMirroredBudget(ctx, p.NS)
			expectMirrorsSelectTheirZones(ctx, p.NS)
			labelWrites := scrapeLabelWrites()
			if minor >= podTopologyLabelsByDefault {
				Expect(labelWrites).To(BeZero(), "the API server labelled the pods: the operator writes no label")
			} else {
				Expect(labelWrites).To(BeNumerically(">=", 3*perZone),
					"the operator labels each covered pod itself, counted by tdb_mirror_writes_total{operation=\"label\"}")
			}
			AddReportEntry(fmt.Sprintf("pods labelled with their zone at binding, and the operator's label writes, on Kubernetes %s", version),
				fmt.Sprintf("%d of %d; %v", labelled, len(pods.Items), labelWrites))
		})

		It("keeps the budget through concurrent kubectl drains of every node (1 pod per zone, one zone at a time), the mirrors selecting their zones' pods", func(ctx SpecContext) {
			watcher := &kwokenv.Watcher{Client: k8s, NS: p.NS, Selector: labels.SelectorFromSet(labels.Set{"app": app}), Expected: fixture.FixedExpected(perZone)}
			sampler := kwokenv.StartSampler(watcher.Unavailable, 100*time.Millisecond, nil)
			old := p.AllNodes()
			By("a new node in each zone, then one kubectl drain per old node, all at once")
			p.AddNodes(ctx, 1)
			start := time.Now()
			results := make(chan drainResult, len(old))
			for _, n := range old {
				go func() { results <- drain(ctx, n) }()
			}
			refusals := 0
			for range old {
				r := <-results
				Expect(r.err).NotTo(HaveOccurred(), "kubectl drain %s on Kubernetes %s:\n%s", r.node, version, r.output)
				refusals += strings.Count(r.output, "will retry after")
			}
			elapsed := time.Since(start)
			p.WaitPodsReady(ctx, app, 3*perZone, old...)
			rep := sampler.Stop()
			GinkgoWriter.Println("watcher:", rep.String())

			for _, z := range fixture.Zones {
				Expect(rep.MaxZone[z]).To(BeNumerically("<=", 1), "zone %s: pods unavailable at once (budget: 1); %s", z, rep.String())
			}
			Expect(rep.MaxDisruptedZones).To(BeNumerically("<=", 1), "zones disrupted at once (budget: 1); %s", rep.String())
			Expect(refusals).To(BeNumerically(">", 0), "%d drains of %d pods at once under one pod at a time: some evictions refused (429) and retried", len(old), 3*perZone)
			expectMirrorsSelectTheirZones(ctx, p.NS)
			AddReportEntry(fmt.Sprintf("who set the replacements' zone label, and how long after scheduling, on Kubernetes %s", version),
				zoneLabelWriters(ctx, p.NS))
			AddReportEntry(fmt.Sprintf("kubectl drain on Kubernetes %s", version), fmt.Sprintf("%d nodes, %d pods in %s; %d refusals retried; %s",
				len(old), 3*perZone, elapsed.Round(time.Second), refusals, rep.String()))
		}, SpecTimeout(6*time.Minute))
	})
})

// createStatefulSets creates one StatefulSet of app per zone, perZone pods
// on the pool's nodes of that zone, spread over them.
func createStatefulSets(ctx context.Context, p *fixture.Pool) {
	for _, z := range fixture.Zones {
		lbls := map[string]string{"app": app, "zone": z}
		sts := builders.StatefulSet(app+"-"+z).Namespace(p.NS).Labels(lbls).PodLabels(lbls).
			Containers(corev1.Container{Name: app, Image: app + ":compat"}).
			RequireNodeLabel(fixture.PoolLabel, p.Name).RequireNodeLabel(kwokenv.ZoneKey, z).
			Spread(corev1.LabelHostname, corev1.ScheduleAnyway).Replicas(perZone).ParallelPodManagement().Obj()
		Expect(k8s.Create(ctx, sts)).To(Succeed())
	}
}

// createMirroredBudget creates the budget of the namespace's app: one pod
// per zone at a time, one zone at a time, mirrored by a PDB per zone.
func createMirroredBudget(ctx context.Context, ns string) {
	tdb := builders.Budget(app).Namespace(ns).MatchLabels(map[string]string{"app": app}).TopologyKey(kwokenv.ZoneKey).
		MaxUnavailable(intstr.FromInt32(1)).MaxDisruptedDomains(1).Obj()
	tdb.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	Expect(k8s.Create(ctx, tdb)).To(Succeed())
	Eventually(ctx, func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(tdb), tdb)).To(Succeed())
		st := tdb.Status
		g.Expect(st.ObservedGeneration).To(Equal(tdb.Generation))
		g.Expect([]int32{st.ExpectedPods, st.CurrentHealthy, st.DisruptionsAllowed}).To(Equal([]int32{3 * perZone, 3 * perZone, 1}), "expected/healthy/allowed")
		g.Expect(st.DomainCount).To(BeEquivalentTo(3))
		c := apimeta.FindStatusCondition(st.Conditions, policyv1alpha1.ConditionMirrored)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s: %s", c.Reason, c.Message)
	}).Should(Succeed())
}

// expectMirrorsSelectTheirZones waits until the budget has one mirror per
// zone, each selecting exactly the pods on that zone's nodes, as the real
// disruption controller counts them: perZone expected and healthy.
func expectMirrorsSelectTheirZones(ctx context.Context, ns string) {
	Eventually(ctx, func(g Gomega) {
		var nodes corev1.NodeList
		g.Expect(k8s.List(ctx, &nodes)).To(Succeed())
		zoneOf := map[string]string{}
		for _, n := range nodes.Items {
			zoneOf[n.Name] = n.Labels[kwokenv.ZoneKey]
		}
		var pods corev1.PodList
		g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
		inZone := map[string][]string{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
				inZone[zoneOf[p.Spec.NodeName]] = append(inZone[zoneOf[p.Spec.NodeName]], p.Name)
			}
		}
		var pdbs policyv1.PodDisruptionBudgetList
		g.Expect(k8s.List(ctx, &pdbs, client.InNamespace(ns), client.MatchingLabels{budget.MirrorBudgetLabel: app})).To(Succeed())
		mirrored := map[string]bool{}
		for _, pdb := range pdbs.Items {
			zone := pdb.Labels[budget.DomainLabel]
			mirrored[zone] = true
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			g.Expect(err).NotTo(HaveOccurred())
			var selected []string
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) {
					selected = append(selected, p.Name)
				}
			}
			sort.Strings(selected)
			g.Expect(selected).To(ConsistOf(inZone[zone]), "mirror %s of zone %s selects the zone's pods", pdb.Name, zone)
			g.Expect(selected).To(HaveLen(perZone))
			g.Expect(pdb.Status.ObservedGeneration).To(Equal(pdb.Generation), "the disruption controller has seen mirror %s", pdb.Name)
			g.Expect([]int32{pdb.Status.ExpectedPods, pdb.Status.CurrentHealthy}).To(Equal([]int32{perZone, perZone}), "mirror %s expected/healthy", pdb.Name)
		}
		g.Expect(mirrored).To(Equal(map[string]bool{"zone-a": true, "zone-b": true, "zone-c": true}), "one mirror per zone")
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}

// zoneLabelWriters says, from the pods' managed fields, which field manager
// set each pod's zone label and, at the managed fields' one-second
// resolution, the longest time from the pod's scheduling to that write.
func zoneLabelWriters(ctx context.Context, ns string) string {
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
	writers := map[string]int{}
	var longest time.Duration
	field := `"f:` + kwokenv.ZoneKey + `"`
	for _, p := range pods.Items {
		var scheduled time.Time
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				scheduled = c.LastTransitionTime.Time
			}
		}
		writer := "the API server, binding it (no field manager)"
		for _, mf := range p.ManagedFields {
			if mf.FieldsV1 != nil && strings.Contains(mf.FieldsV1.GetRawString(), field) {
				writer = mf.Manager + " " + string(mf.Operation)
				if mf.Time != nil && !scheduled.IsZero() {
					longest = max(longest, mf.Time.Sub(scheduled))
				}
			}
		}
		writers[writer]++
	}
	return fmt.Sprintf("%v; longest from scheduling to the label: %s", writers, longest)
}

// scrapeLabelWrites is the operator's tdb_mirror_writes_total{operation="label"}.
func scrapeLabelWrites() float64 {
	var writes float64
	Expect(kwokenv.ScrapeMetrics(operatorOptions.MetricsPort, func(series string, v float64) {
		if strings.HasPrefix(series, "tdb_mirror_writes_total{") && kwokenv.MetricLabel(series, "operation") == "label" {
			writes += v
		}
	})).To(Succeed())
	return writes
}

type drainResult struct {
	node, output string
	err          error
}

// drain runs the minor's `kubectl drain` of node; it retries refused
// evictions (429) every 5 seconds until its timeout.
func drain(ctx context.Context, node string) drainResult {
	out, errOut, err := run(ctx, nil, kubectl, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=4m")
	r := drainResult{node: node, output: out + errOut, err: err}
	GinkgoWriter.Printf("kubectl drain %s: %v\n%s\n", node, err, fixture.Quoted(r.output))
	return r
}
