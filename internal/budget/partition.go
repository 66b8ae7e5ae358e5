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

package budget

import (
	"fmt"
	"regexp"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// Partitions: a budget with spec.partition reads each pod's domain from the
// pod, not its node. Replicas of one partition (ingester-zone-a-5,
// ingester-zone-b-5, ingester-zone-c-5) form one domain wherever they run,
// scheduled or not; everything that holds per zone holds per partition.
// A pod's node matters only when it is gone: the pod runs nowhere and is
// not counted healthy.

// partitionSource is spec.partition parsed.
type partitionSource struct {
	label string
	// re matches the whole name; group is the capture group of the
	// partition.
	re    *regexp.Regexp
	group int
	// expr is the expression as written, for messages.
	expr string
}

// parsePartition compiles spec.partition: the expression must compile and
// have the group asked for.
func parsePartition(p *policyv1alpha1.PartitionSource) (*partitionSource, error) {
	switch {
	case (p.Label == "") == (p.PodNameRegex == ""):
		return nil, fmt.Errorf("spec.partition: exactly one of label or podNameRegex must be set")
	case p.Label != "":
		if p.PodNameRegexGroup != nil {
			return nil, fmt.Errorf("spec.partition.podNameRegexGroup requires podNameRegex")
		}
		return &partitionSource{label: p.Label}, nil
	}
	// Compiled alone first: wrapped as written, "a)|(b" would compile to
	// an expression anchored on one side only.
	if _, err := regexp.Compile(p.PodNameRegex); err != nil {
		return nil, fmt.Errorf("spec.partition.podNameRegex: %w", err)
	}
	re, err := regexp.Compile(`^(?:` + p.PodNameRegex + `)$`)
	if err != nil {
		return nil, fmt.Errorf("spec.partition.podNameRegex: %w", err)
	}
	group := 1
	if p.PodNameRegexGroup != nil {
		group = int(*p.PodNameRegexGroup)
	}
	if group < 1 || group > re.NumSubexp() {
		return nil, fmt.Errorf("spec.partition.podNameRegexGroup: %q has %d capture group(s), group %d asked", p.PodNameRegex, re.NumSubexp(), group)
	}
	return &partitionSource{re: re, group: group, expr: p.PodNameRegex}, nil
}

// ofName is the partition of a pod of this name for a source reading
// names: "" when the name does not match, or the group is empty or not a
// label value (a mirror selects a partition by a label on its pods).
func (p *partitionSource) ofName(name string) string {
	m := p.re.FindStringSubmatch(name)
	if m == nil || len(validation.IsValidLabelValue(m[p.group])) > 0 {
		return ""
	}
	return m[p.group]
}

// of is the pod's partition, "" when it has none.
func (p *partitionSource) of(pod *corev1.Pod) string {
	if p.re == nil {
		return pod.Labels[p.label]
	}
	return p.ofName(pod.Name)
}

// ofStatefulSetPod is the partition of a StatefulSet's pod of this name
// and ordinal, whether or not the pod exists: from the name for a source
// reading names, the ordinal or the name for the labels the StatefulSet
// controller sets from them; "" when the source does not tell.
func (p *partitionSource) ofStatefulSetPod(name string, ordinal int32) string {
	switch {
	case p.re != nil:
		return p.ofName(name)
	case p.label == appsv1.PodIndexLabel:
		return strconv.Itoa(int(ordinal))
	case p.label == appsv1.StatefulSetPodNameLabel:
		return name
	}
	return ""
}

// namesTell says whether a StatefulSet pod's partition follows from its
// name (see ofStatefulSetPod).
func (p *partitionSource) namesTell() bool {
	return p.re != nil || p.label == appsv1.PodIndexLabel || p.label == appsv1.StatefulSetPodNameLabel
}

// missing says why a pod has no partition.
func (p *partitionSource) missing() string {
	if p.re == nil {
		return fmt.Sprintf("the pod has no label %s", p.label)
	}
	return fmt.Sprintf("the pod's name does not match %q (or its group %d is empty, or not a label value)", p.expr, p.group)
}

// placePartition places a selected pod of a partition budget: in its
// partition, on a gone node (not counted healthy), or without a partition.
func (c *coverage) placePartition(pod *corev1.Pod) (placeKind, string) {
	d := c.partition.of(pod)
	switch {
	case d == "":
		return noDomain, ""
	case pod.Spec.NodeName != "" && c.nodes(pod.Spec.NodeName) == nil:
		return nodeGone, d
	}
	return inDomain, d
}
