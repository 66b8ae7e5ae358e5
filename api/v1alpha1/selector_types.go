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

package v1alpha1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelSelector has the JSON shape of metav1.LabelSelector, so manifests
// written for one fit the other, but its maps, lists and strings are bounded.
// The bounds let the API server check every key, operator and value as
// metav1.LabelSelectorAsSelector parses them: the CEL cost of a rule over an
// unbounded map or string is estimated far over the API server's limit, and
// the CRD would be refused. A selector the API server admits is therefore
// one the operator can parse.
// +structType=atomic
type LabelSelector struct {
	// matchLabels are {key, value} pairs, ANDed; each is the requirement
	// "key In (value)". A key is a label key: an optional prefix, a DNS
	// subdomain of at most 253 characters followed by "/", then a name of 1
	// to 63 letters, digits, '-', '_' or '.' that begins and ends with a
	// letter or digit. A value is a label value: at most 63 characters,
	// empty or beginning and ending with a letter or digit, with '-', '_'
	// and '.' inside. At most 64 pairs.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([^/]*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="matchLabels keys must be label keys: a name of 1 to 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit, optionally after a prefix and one '/'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.contains('/') || (k.indexOf('/') <= 253 && k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/')))",message="the prefix of a matchLabels key (before the '/') must be a DNS subdomain of at most 253 characters: lowercase letters, digits, '-' and '.'"
	MatchLabels map[string]LabelValue `json:"matchLabels,omitempty"`
	// matchExpressions are requirements on pod labels, ANDed with each other
	// and with matchLabels. At most 32.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// A type of its own, so that the values of matchLabels carry the bounds:
// controller-gen has no marker for a map's values.

// LabelValue is a label value: at most 63 characters, empty or beginning and
// ending with a letter or digit, with '-', '_' and '.' inside.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
type LabelValue string

// LabelSelectorRequirement is a requirement on pod labels with the fields of
// a Kubernetes label selector's, checked as Kubernetes' label selector parser
// checks them: the key is a label key, the values are label values, In and
// NotIn need values and Exists and DoesNotExist take none.
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : true",message="values must be non-empty when operator is In or NotIn"
// +kubebuilder:validation:XValidation:rule="self.operator in ['Exists', 'DoesNotExist'] ? (!has(self.values) || size(self.values) == 0) : true",message="values must be empty when operator is Exists or DoesNotExist"
type LabelSelectorRequirement struct {
	// key is the pod label key the requirement applies to: a valid label
	// key (an optional DNS subdomain prefix of at most 253 characters and a
	// "/", then a name of at most 63 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('/') || self.split('/')[0].size() <= 253",message="the prefix of a key must be at most 253 characters"
	Key string `json:"key"`
	// operator relates the key to the values: In, NotIn, Exists or
	// DoesNotExist.
	// +required
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator metav1.LabelSelectorOperator `json:"operator"`
	// values are label values, each at most 63 characters, empty or
	// beginning and ending with a letter or digit, with '-', '_' and '.'
	// inside. In and NotIn need at least one; Exists and DoesNotExist take
	// none. At most 256.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Values []string `json:"values,omitempty"`
}

// SetAsLabelSelector returns the selector that matches exactly the labels
// in set, as metav1.SetAsLabelSelector does.
func SetAsLabelSelector(set map[string]string) *LabelSelector {
	s := &LabelSelector{MatchLabels: make(map[string]LabelValue, len(set))}
	for k, v := range set {
		s.MatchLabels[k] = LabelValue(v)
	}
	return s
}

// AsMeta returns the selector as a metav1.LabelSelector, for
// metav1.LabelSelectorAsSelector. A nil selector gives nil, which that
// function turns into a selector of nothing. The result shares no map or
// slice with s, so a caller may not change a cached object through it.
func (s *LabelSelector) AsMeta() *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := &metav1.LabelSelector{}
	if s.MatchLabels != nil {
		out.MatchLabels = make(map[string]string, len(s.MatchLabels))
		for k, v := range s.MatchLabels {
			out.MatchLabels[k] = string(v)
		}
	}
	for _, e := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: e.Key, Operator: e.Operator, Values: slices.Clone(e.Values),
		})
	}
	return out
}
