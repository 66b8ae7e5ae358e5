// Package v1alpha1 holds the policy.tdb.dev/v1alpha1 API: the
// TopologyDisruptionBudget, a disruption budget applied per failure domain.
// +kubebuilder:object:generate=true
// +groupName=policy.tdb.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "policy.tdb.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &TopologyDisruptionBudget{}, &TopologyDisruptionBudgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
