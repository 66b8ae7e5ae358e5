//go:build integration

package controller_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
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

func matchLabels(key, value string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
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

	// parseSelectors parses the spec's selectors as the status controller
	// and the webhook do.
	parseSelectors := func(spec policyv1alpha1.TopologyDisruptionBudgetSpec) error {
		if _, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
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
		Entry("selector matchLabels value of 64 characters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = matchLabels("app", name64)
		}, "spec.selector.matchLabels", "matchLabels values must be at most 63 characters"),
		Entry("selector matchExpressions empty key", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "", Operator: "Exists"}}}
		}, "spec.selector.matchExpressions", "matchExpressions keys must be label keys: 1 to 317 characters"),
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
		Entry("matchLabels: an empty value, a one-character key, a key with a dotted prefix", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "", "app.kubernetes.io/name": "ingester"}}
		}),
		Entry("matchExpressions: a prefixed key", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: prefix253 + "/" + name63, Operator: "In", Values: []string{name63, ""}},
			}}
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
