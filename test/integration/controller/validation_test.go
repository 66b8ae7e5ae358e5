//go:build integration

package controller_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

const zoneKey = "topology.kubernetes.io/zone"

// validSpec is a complete, valid spec each validation case breaks once.
func validSpec() policyv1alpha1.TopologyDisruptionBudgetSpec {
	return policyv1alpha1.TopologyDisruptionBudgetSpec{
		Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ingester"}},
		TopologyKey:         zoneKey,
		MaxUnavailable:      ptr.To(intstr.FromInt32(1)),
		MaxDisruptedDomains: ptr.To[int32](1),
		NodeSelectorTerm: &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
			{Key: zoneKey, Operator: "NotIn", Values: []string{"zone-c"}},
		}},
		UnhealthyPodEvictionPolicy: policyv1alpha1.IfHealthyBudget,
		Rollout: &policyv1alpha1.RolloutSpec{
			Strategy: policyv1alpha1.DomainByDomain, DomainOrder: []string{"zone-a", "zone-b"},
		},
	}
}

func req(key string, op policyv1alpha1.NodeSelectorOperator, values ...string) *policyv1alpha1.NodeSelectorTerm {
	return &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

var _ = Describe("API validation by the API server", func() {
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
		tdb := &policyv1alpha1.TopologyDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "ingesters", Namespace: ns},
			Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
				Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ingester"}},
				TopologyKey:  zoneKey,
				MinAvailable: ptr.To(intstr.FromString("75%")),
				Rollout:      &policyv1alpha1.RolloutSpec{},
				NodeSelectorTerm: &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
					{Key: "node.example.com/generation", Operator: "Gt", Values: []string{"3"}},
					{Key: "spot", Operator: "DoesNotExist"},
				}},
			},
		}
		Expect(k8s.Create(ctx, tdb)).To(Succeed())
		Expect(tdb.Spec.UnhealthyPodEvictionPolicy).To(Equal(policyv1alpha1.IfHealthyBudget))
		Expect(tdb.Spec.Rollout.Strategy).To(Equal(policyv1alpha1.DomainByDomain))
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
		Entry("selector with an unknown operator", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Like", Values: []string{"x"}}}}
		}, "spec.selector", "matchExpressions operator must be In, NotIn, Exists or DoesNotExist"),
		Entry("selector In without values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "In"}}}
		}, "spec.selector", "values must be non-empty for In and NotIn"),
		Entry("selector Exists with values", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Exists", Values: []string{"x"}}}}
		}, "spec.selector", "empty for Exists and DoesNotExist"),
		Entry("no selector", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = nil
		}, "spec.selector", "Required value"),
	)
})
