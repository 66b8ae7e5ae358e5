// Package v1alpha1 holds the policy.tdb.dev/v1alpha1 API: the
// TopologyDisruptionBudget, a disruption budget applied per failure domain.
// +kubebuilder:object:generate=true
// +groupName=policy.tdb.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "policy.tdb.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
