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

package controller_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

const zoneKey = builders.ZoneKey

// validSpec is a complete, valid spec each validation case breaks once.
func validSpec() policyv1alpha1.TopologyDisruptionBudgetSpec {
	return builders.Budget("valid").MatchLabels(map[string]string{"app": "ingester"}).TopologyKey(zoneKey).
		MaxUnavailable(intstr.FromInt32(1)).MaxDisruptedDomains(1).
		NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
			{Key: zoneKey, Operator: "NotIn", Values: []string{"zone-c"}},
		}}).
		UnhealthyPodEvictionPolicy(policyv1alpha1.IfHealthyBudget).
		Rollout(policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain, DomainOrder: []string{"zone-a", "zone-b"}}).
		Obj().Spec
}

func req(key string, op policyv1alpha1.NodeSelectorOperator, values ...string) *policyv1alpha1.NodeSelectorTerm {
	return &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func matchLabels(key, value string) *policyv1alpha1.LabelSelector {
	return policyv1alpha1.SetAsLabelSelector(map[string]string{key: value})
}

func matchExpression(key string, op metav1.LabelSelectorOperator, values ...string) *policyv1alpha1.LabelSelector {
	return &policyv1alpha1.LabelSelector{MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

// manyLabels returns n distinct label pairs, each a key with a 253-character
// prefix and a 63-character name and a 63-character value: the largest
// strings the CRD admits, so a selector of them costs the CEL rules the most.
func manyLabels(n int) map[string]string {
	set := map[string]string{}
	for i := range n {
		set[fmt.Sprintf("%s/%s%02d", prefix253, name63[:61], i)] = name63
	}
	return set
}

// Label keys and values at the limits of Kubernetes' label syntax
// (k8s.io/apimachinery/pkg/util/validation: IsQualifiedName,
// IsValidLabelValue).
var (
	// prefix253 is a DNS subdomain of the longest length a key prefix may
	// have; prefix254 is one character too long.
	prefix253 = strings.Repeat("a.", 126) + "a"
	prefix254 = strings.Repeat("a.", 126) + "ab"
	// name63 is a key name or label value of the longest length allowed,
	// using every character class the syntax allows; name64 is too long.
	name63 = "A" + strings.Repeat("b-_.", 15) + "z9"
	name64 = name63 + "x"
)

// The CRD's specs carry the label api-validation: make test-compat runs
// them alone on the kube-apiserver of each minor of the support matrix.
var _ = Describe("API validation by the API server", Label("api-validation"), func() {
	var ns string
	BeforeEach(func() {
		var err error
		ns, err = framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
	})

	create := func(mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec)) error {
		spec := validSpec()
		mutate(&spec)
		return k8s.Create(ctx, &policyv1alpha1.TopologyDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "tdb-", Namespace: ns},
			Spec:       spec,
		})
	}

	It("accepts the full example of the design, and fills the defaults", func() {
		tdb := builders.Budget("ingesters").Namespace(ns).MatchLabels(map[string]string{"app": "ingester"}).TopologyKey(zoneKey).
			MinAvailable(intstr.FromString("75%")).Rollout(policyv1alpha1.RolloutSpec{}).
			NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
				{Key: "node.example.com/generation", Operator: "Gt", Values: []string{"3"}},
				{Key: "spot", Operator: "DoesNotExist"},
			}}).Obj()
		Expect(k8s.Create(ctx, tdb)).To(Succeed())
		Expect(tdb.Spec.UnhealthyPodEvictionPolicy).To(Equal(policyv1alpha1.IfHealthyBudget))
		Expect(tdb.Spec.Rollout.Strategy).To(Equal(policyv1alpha1.DomainByDomain))
	})

	It("accepts a partition budget (by name, with maxDisruptedDomains and minReadySeconds, or by label)", func() {
		byName := builders.Budget("ingesters").Namespace(ns).MatchLabels(map[string]string{"app": "ingester"}).
			PartitionByName(`ingester-zone-[a-z]-([0-9]+)`).MaxUnavailable(intstr.FromInt32(1)).MaxDisruptedDomains(2).MinReadySeconds(10).Obj()
		Expect(k8s.Create(ctx, byName)).To(Succeed())
		byLabel := builders.Budget("ingesters-by-index").Namespace(ns).MatchLabels(map[string]string{"app": "ingester"}).
			Partition(policyv1alpha1.PartitionSource{Label: "apps.kubernetes.io/pod-index"}).MaxUnavailable(intstr.FromInt32(1)).Obj()
		Expect(k8s.Create(ctx, byLabel)).To(Succeed())
	})

	DescribeTable("refuses an invalid spec with the field path and a readable message",
		func(mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec), wantInMessage ...string) {
			err := create(mutate)
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			for _, want := range wantInMessage {
				Expect(err.Error()).To(ContainSubstring(want))
			}
		},
		Entry("neither minAvailable nor maxUnavailable", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = nil
		}, "spec", "exactly one of minAvailable or maxUnavailable must be set"),
		Entry("both minAvailable and maxUnavailable", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MinAvailable = ptr.To(intstr.FromInt32(2))
		}, "spec", "exactly one of minAvailable or maxUnavailable must be set"),
		Entry("negative maxUnavailable", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = ptr.To(intstr.FromInt32(-1))
		}, "spec.maxUnavailable", "must be a non-negative integer or a percentage between 0% and 100%"),
		Entry("negative minAvailable", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable, s.MinAvailable = nil, ptr.To(intstr.FromInt32(-3))
		}, "spec.minAvailable", "must be a non-negative integer"),
		Entry("percentage above 100%", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable, s.MinAvailable = nil, ptr.To(intstr.FromString("150%"))
		}, "spec.minAvailable", "between 0% and 100%"),
		Entry("malformed percentage", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = ptr.To(intstr.FromString("10.5%"))
		}, "spec.maxUnavailable", "between 0% and 100%"),
		Entry("a string that is not a percentage", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = ptr.To(intstr.FromString("one"))
		}, "spec.maxUnavailable", "between 0% and 100%"),
		Entry("maxDisruptedDomains below 1", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxDisruptedDomains = ptr.To[int32](0)
		}, "spec.maxDisruptedDomains", "greater than or equal to 1"),
		Entry("maxDisruptedDomains without topologyKey", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = ""
		}, "spec.maxDisruptedDomains", "maxDisruptedDomains requires topologyKey"),
		Entry("partition with topologyKey", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Partition = &policyv1alpha1.PartitionSource{Label: "apps.kubernetes.io/pod-index"}
		}, "spec.partition", "partition (the pod) excludes topologyKey and nodeSelectorTerm"),
		Entry("partition with nodeSelectorTerm", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey, s.MaxDisruptedDomains = "", nil
			s.Partition = &policyv1alpha1.PartitionSource{Label: "apps.kubernetes.io/pod-index"}
			s.NodeSelectorTerm = &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{{Key: "spot", Operator: "DoesNotExist"}}}
		}, "spec.partition", "excludes topologyKey and nodeSelectorTerm"),
		Entry("partition with both label and podNameRegex", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey, s.NodeSelectorTerm, s.Rollout = "", nil, nil
			s.Partition = &policyv1alpha1.PartitionSource{Label: "p", PodNameRegex: "ingester-([0-9]+)"}
		}, "spec.partition", "exactly one of label or podNameRegex must be set"),
		Entry("partition with neither label nor podNameRegex", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey, s.NodeSelectorTerm, s.Rollout = "", nil, nil
			s.Partition = &policyv1alpha1.PartitionSource{}
		}, "spec.partition", "exactly one of label or podNameRegex must be set"),
		Entry("podNameRegexGroup without podNameRegex", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey, s.NodeSelectorTerm, s.Rollout = "", nil, nil
			s.Partition = &policyv1alpha1.PartitionSource{Label: "p", PodNameRegexGroup: ptr.To[int32](2)}
		}, "spec.partition.podNameRegexGroup", "podNameRegexGroup requires podNameRegex"),
		Entry("podNameRegexGroup 0", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey, s.NodeSelectorTerm, s.Rollout = "", nil, nil
			s.Partition = &policyv1alpha1.PartitionSource{PodNameRegex: "ingester-([0-9]+)", PodNameRegexGroup: ptr.To[int32](0)}
		}, "spec.partition.podNameRegexGroup", "greater than or equal to 1"),
		Entry("partition label that is not a label key", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey, s.NodeSelectorTerm, s.Rollout = "", nil, nil
			s.Partition = &policyv1alpha1.PartitionSource{Label: "not a key!"}
		}, "spec.partition.label", "should match"),
		Entry("negative minReadySeconds", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MinReadySeconds = -1
		}, "spec.minReadySeconds", "greater than or equal to 0"),
		Entry("topologyKey that is not a label key", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = "zone with spaces!"
		}, "spec.topologyKey", "should match"),
		Entry("topologyKey with an empty name part", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = "example.com/"
		}, "spec.topologyKey", "should match"),
		Entry("nodeSelectorTerm In without values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req(zoneKey, "In")
		}, "spec.nodeSelectorTerm.matchExpressions[0]", "values must be non-empty when operator is In or NotIn"),
		Entry("nodeSelectorTerm Exists with values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req(zoneKey, "Exists", "zone-a")
		}, "spec.nodeSelectorTerm.matchExpressions[0]", "values must be empty when operator is Exists or DoesNotExist"),
		Entry("nodeSelectorTerm Gt with a non-integer", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("gen", "Gt", "three")
		}, "spec.nodeSelectorTerm.matchExpressions[0]", "exactly one integer"),
		Entry("nodeSelectorTerm Lt with two values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("gen", "Lt", "1", "2")
		}, "spec.nodeSelectorTerm.matchExpressions[0]", "exactly one integer"),
		Entry("nodeSelectorTerm with an unknown operator", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req(zoneKey, "Near", "zone-a")
		}, "spec.nodeSelectorTerm.matchExpressions[0].operator", "Unsupported value"),
		Entry("nodeSelectorTerm matchFields on a field other than metadata.name", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{
				{Key: "spec.unschedulable", Operator: "In", Values: []string{"true"}},
			}}
		}, "spec.nodeSelectorTerm.matchFields[0].key", "Unsupported value"),
		Entry("unknown unhealthyPodEvictionPolicy", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.UnhealthyPodEvictionPolicy = "Sometimes"
		}, "spec.unhealthyPodEvictionPolicy", "Unsupported value"),
		Entry("unknown rollout strategy", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Rollout.Strategy = "Random"
		}, "spec.rollout.strategy", "Unsupported value"),
		Entry("duplicate names in rollout.domainOrder", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Rollout.DomainOrder = []string{"zone-a", "zone-b", "zone-a"}
		}, "spec.rollout.domainOrder[2]", "Duplicate value"),
		Entry("selector matchLabels with more than 64 pairs", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = policyv1alpha1.SetAsLabelSelector(manyLabels(65))
		}, "spec.selector.matchLabels", "must have at most 64 items"),
		Entry("selector with more than 32 matchExpressions", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &policyv1alpha1.LabelSelector{}
			for i := range 33 {
				s.Selector.MatchExpressions = append(s.Selector.MatchExpressions,
					policyv1alpha1.LabelSelectorRequirement{Key: fmt.Sprintf("k%d", i), Operator: metav1.LabelSelectorOpExists})
			}
		}, "spec.selector.matchExpressions", "must have at most 32 items"),
		Entry("selector matchExpressions with more than 256 values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			values := make([]string, 257)
			for i := range values {
				values[i] = fmt.Sprintf("v%d", i)
			}
			s.Selector = matchExpression("app", metav1.LabelSelectorOpIn, values...)
		}, "spec.selector.matchExpressions[0].values", "must have at most 256 items"),
		Entry("no selector", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = nil
		}, "spec.selector", "Required value"),
	)

	// parseSelectors parses the spec's selectors as the status controller
	// and the webhook do.
	parseSelectors := func(spec policyv1alpha1.TopologyDisruptionBudgetSpec) error {
		if _, err := metav1.LabelSelectorAsSelector(spec.Selector.AsMeta()); err != nil {
			return err
		}
		_, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{spec.NodeSelectorTerm.ToCore()}})
		return err
	}

	DescribeTable("refuses, with the field path, label keys and values the operator could not parse",
		func(mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec), wantInMessage ...string) {
			spec := validSpec()
			mutate(&spec)
			Expect(parseSelectors(spec)).To(HaveOccurred(), "the case must be one the operator's parsers refuse")

			err := create(mutate)
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			for _, want := range wantInMessage {
				Expect(err.Error()).To(ContainSubstring(want))
			}
		},
		Entry("selector matchLabels key with a space", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("app name", "ingester")
		}, "spec.selector.matchLabels", "matchLabels keys must be label keys"),
		Entry("selector matchLabels empty key", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("", "ingester")
		}, "spec.selector.matchLabels", "matchLabels keys must be label keys"),
		Entry("selector matchLabels key whose name is 64 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("example.com/"+name64, "ingester")
		}, "spec.selector.matchLabels", "matchLabels keys must be label keys"),
		Entry("selector matchLabels key with two slashes", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("example.com/app/name", "ingester")
		}, "spec.selector.matchLabels", "matchLabels keys must be label keys"),
		Entry("selector matchLabels key whose name ends with a dash", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("app-", "ingester")
		}, "spec.selector.matchLabels", "matchLabels keys must be label keys"),
		Entry("selector matchLabels key with an empty prefix", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("/app", "ingester")
		}, "spec.selector.matchLabels", "the prefix of a matchLabels key (before the '/') must be a DNS subdomain"),
		Entry("selector matchLabels key with an upper-case prefix", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("Example.com/app", "ingester")
		}, "spec.selector.matchLabels", "must be a DNS subdomain"),
		Entry("selector matchLabels key whose prefix is 254 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels(prefix254+"/app", "ingester")
		}, "spec.selector.matchLabels", "must be a DNS subdomain of at most 253 characters"),
		Entry("selector matchLabels key with a prefix that is not a DNS subdomain", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("bad_prefix.com/app", "ingester")
		}, "spec.selector.matchLabels", "must be a DNS subdomain"),
		Entry("selector matchLabels value of 64 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("app", name64)
		}, "spec.selector.matchLabels.app", "may not be more than 63"),
		Entry("selector matchLabels value with a space", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("app", "a b")
		}, "spec.selector.matchLabels.app", "should match"),
		Entry("selector matchLabels value beginning with a dash", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("app", "-x")
		}, "spec.selector.matchLabels.app", "should match"),
		Entry("selector matchLabels value ending with a dot", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("app", "x.")
		}, "spec.selector.matchLabels.app", "should match"),
		Entry("selector matchExpressions empty key", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("", metav1.LabelSelectorOpExists)
		}, "spec.selector.matchExpressions[0].key", "should be at least 1 chars long"),
		Entry("selector matchExpressions key with a space", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("bad key!", metav1.LabelSelectorOpIn, "x")
		}, "spec.selector.matchExpressions[0].key", "should match"),
		Entry("selector matchExpressions key whose name is 64 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("example.com/"+name64, metav1.LabelSelectorOpExists)
		}, "spec.selector.matchExpressions[0].key", "should match"),
		Entry("selector matchExpressions key with an upper-case prefix", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("Example.com/app", metav1.LabelSelectorOpExists)
		}, "spec.selector.matchExpressions[0].key", "should match"),
		Entry("selector matchExpressions key with an empty prefix", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("/app", metav1.LabelSelectorOpExists)
		}, "spec.selector.matchExpressions[0].key", "should match"),
		Entry("selector matchExpressions key whose prefix is 254 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression(prefix254+"/app", metav1.LabelSelectorOpExists)
		}, "spec.selector.matchExpressions[0].key", "the prefix of a key must be at most 253 characters"),
		Entry("selector matchExpressions value with a space", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("app", metav1.LabelSelectorOpIn, "ingester", "a b")
		}, "spec.selector.matchExpressions[0].values[1]", "should match"),
		Entry("selector matchExpressions value beginning with a dash", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("app", metav1.LabelSelectorOpNotIn, "-x")
		}, "spec.selector.matchExpressions[0].values[0]", "should match"),
		Entry("selector matchExpressions value of 64 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("app", metav1.LabelSelectorOpIn, name64)
		}, "spec.selector.matchExpressions[0].values[0]", "may not be more than 63"),
		Entry("selector In without values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("app", metav1.LabelSelectorOpIn)
		}, "spec.selector.matchExpressions[0]", "values must be non-empty when operator is In or NotIn"),
		Entry("selector NotIn without values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("app", metav1.LabelSelectorOpNotIn)
		}, "spec.selector.matchExpressions[0]", "values must be non-empty when operator is In or NotIn"),
		Entry("selector Exists with values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("app", metav1.LabelSelectorOpExists, "x")
		}, "spec.selector.matchExpressions[0]", "values must be empty when operator is Exists or DoesNotExist"),
		Entry("selector DoesNotExist with values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("app", metav1.LabelSelectorOpDoesNotExist, "x")
		}, "spec.selector.matchExpressions[0]", "values must be empty when operator is Exists or DoesNotExist"),
		Entry("selector operator Gt, which only node selectors have", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("gen", "Gt", "3")
		}, "spec.selector.matchExpressions[0].operator", "Unsupported value"),
		Entry("selector with an unknown operator", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression("app", "Like", "x")
		}, "spec.selector.matchExpressions[0].operator", "Unsupported value"),
		Entry("nodeSelectorTerm key that is not a label key", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("zone name", "In", "zone-a")
		}, "spec.nodeSelectorTerm.matchExpressions[0].key", "should match"),
		Entry("nodeSelectorTerm key whose name is 64 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("example.com/"+name64, "Exists")
		}, "spec.nodeSelectorTerm.matchExpressions[0].key", "should match"),
		Entry("nodeSelectorTerm key whose prefix is 254 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req(prefix254+"/zone", "Exists")
		}, "spec.nodeSelectorTerm.matchExpressions[0].key", "the prefix of a key must be at most 253 characters"),
		Entry("nodeSelectorTerm In value with a space", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req(zoneKey, "In", "zone-a", "zone b")
		}, "spec.nodeSelectorTerm.matchExpressions[0].values[1]", "should match"),
		Entry("nodeSelectorTerm NotIn value beginning with a dot", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req(zoneKey, "NotIn", ".zone-c")
		}, "spec.nodeSelectorTerm.matchExpressions[0].values[0]", "should match"),
		Entry("nodeSelectorTerm In value of 64 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req(zoneKey, "In", name64)
		}, "spec.nodeSelectorTerm.matchExpressions[0].values[0]", "may not be more than 63"),
		Entry("nodeSelectorTerm Gt one above the largest int64", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("gen", "Gt", "9223372036854775808")
		}, "spec.nodeSelectorTerm.matchExpressions[0].values", "exactly one integer between 0 and 9223372036854775807"),
		Entry("nodeSelectorTerm Lt with 20 digits", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("gen", "Lt", "10000000000000000000")
		}, "spec.nodeSelectorTerm.matchExpressions[0].values", "exactly one integer between 0 and 9223372036854775807"),
		Entry("nodeSelectorTerm Gt with a negative integer, which is not a label value", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("gen", "Gt", "-1")
		}, "spec.nodeSelectorTerm.matchExpressions[0].values", "exactly one integer between 0 and 9223372036854775807"),
	)

	DescribeTable("accepts specs at the limits of the label syntax, which the operator parses",
		func(mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec)) {
			spec := validSpec()
			mutate(&spec)
			Expect(parseSelectors(spec)).To(Succeed(), "the case must be one the operator's parsers accept")
			Expect(create(mutate)).To(Succeed())
		},
		Entry("matchLabels: a key with a 253-character prefix and a 63-character name, a 63-character value", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels(prefix253+"/"+name63, name63)
		}),
		Entry("matchLabels: an empty value, a one-character key, keys with a prefix", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = policyv1alpha1.SetAsLabelSelector(map[string]string{"a": "", "app.kubernetes.io/name": "ingester", "example.com/app": "a_b.c-d"})
		}),
		Entry("matchLabels: 64 pairs of the longest keys and values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = policyv1alpha1.SetAsLabelSelector(manyLabels(64))
		}),
		Entry("an empty selector (every pod of the namespace)", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &policyv1alpha1.LabelSelector{}
		}),
		Entry("matchExpressions: a key with a 253-character prefix and a 63-character name, 63-character and empty values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchExpression(prefix253+"/"+name63, metav1.LabelSelectorOpIn, name63, "")
		}),
		Entry("matchExpressions: every operator, a prefixed key, with matchLabels", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &policyv1alpha1.LabelSelector{
				MatchLabels: map[string]policyv1alpha1.LabelValue{"app": "ingester"},
				MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{
					{Key: "example.com/app", Operator: metav1.LabelSelectorOpIn, Values: []string{"ingester", "querier"}},
					{Key: "track", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"canary"}},
					{Key: "zone", Operator: metav1.LabelSelectorOpExists},
					{Key: "spot", Operator: metav1.LabelSelectorOpDoesNotExist, Values: []string{}},
				},
			}
		}),
		Entry("matchExpressions: 32 requirements of 256 of the longest values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			values := make([]string, 256)
			for i := range values {
				values[i] = fmt.Sprintf("%s%03d", name63[:60], i)
			}
			s.Selector = &policyv1alpha1.LabelSelector{}
			for i := range 32 {
				s.Selector.MatchExpressions = append(s.Selector.MatchExpressions, policyv1alpha1.LabelSelectorRequirement{
					Key: fmt.Sprintf("%s/%s%02d", prefix253, name63[:61], i), Operator: metav1.LabelSelectorOpIn, Values: values,
				})
			}
		}),
		Entry("nodeSelectorTerm: a key with a 253-character prefix and a 63-character name, 63-character and empty values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req(prefix253+"/"+name63, "In", name63, "")
		}),
		Entry("nodeSelectorTerm: Gt the largest int64", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("node.example.com/generation", "Gt", "9223372036854775807")
		}),
		Entry("nodeSelectorTerm: Lt 0, and an 18-digit Gt", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
				{Key: "gen", Operator: "Lt", Values: []string{"0"}},
				{Key: "rack", Operator: "Gt", Values: []string{"999999999999999999"}},
			}}
		}),
		Entry("nodeSelectorTerm: Gt with leading zeros (strconv.ParseInt accepts them)", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = req("gen", "Gt", "0009223372036854775807")
		}),
	)
})

var _ = Describe("The CRD", Label("api-validation"), func() {
	It("is accepted by the API server, every validation rule within the CEL cost limit", func() {
		raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "crd", "bases", "policy.tdb.dev_topologydisruptionbudgets.yaml"))
		Expect(err).NotTo(HaveOccurred())
		var crd apiextensionsv1.CustomResourceDefinition
		Expect(yaml.Unmarshal(raw, &crd)).To(Succeed())
		scheme := k8sruntime.NewScheme()
		Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())

		// envtest installed it before the suite: it is established, and it
		// is the generated one.
		var installed apiextensionsv1.CustomResourceDefinition
		Expect(c.Get(ctx, client.ObjectKey{Name: crd.Name}, &installed)).To(Succeed())
		Expect(installed.Status.Conditions).To(ContainElement(And(
			HaveField("Type", apiextensionsv1.Established), HaveField("Status", apiextensionsv1.ConditionTrue))))
		selectorSchema := func(crd *apiextensionsv1.CustomResourceDefinition) apiextensionsv1.JSONSchemaProps {
			return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["selector"]
		}
		Expect(selectorSchema(&installed)).To(Equal(selectorSchema(&crd)))

		// An update of an existing CRD lets rules it already had exceed the
		// cost limit; a create checks every rule: a copy in another group,
		// created as a dry run.
		copied := crd.DeepCopy()
		copied.Spec.Group = "copy." + crd.Spec.Group
		copied.Name = crd.Spec.Names.Plural + "." + copied.Spec.Group
		Expect(c.Create(ctx, copied, client.DryRunAll)).To(Succeed())
	})
})
