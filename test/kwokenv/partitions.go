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

package kwokenv

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// ReadyDelayAnnotation overrides the cluster's pod start-up delay for one
// pod (hack/cluster/stages/pod-running.yaml).
const ReadyDelayAnnotation = "tdb.dev/ready-delay"

// PartitionLayout is a Mimir-like partitioned workload: in each zone one
// StatefulSet <App>-<zone> (ingester-zone-a) of Partitions replicas, pinned
// to the zone, Parallel, spread over the zone's nodes; pod
// <App>-<zone>-<p> is partition p's replica in that zone, so each partition
// has one replica per zone.
type PartitionLayout struct {
	Namespace, App string
	// Zones are the zones' names as the nodes' zone label gives them
	// ("zone-a", ...).
	Zones      []string
	Partitions int
	// NodeLabel, when its key is set, is a node label the pods require
	// (the nodes of one case or spec).
	NodeLabel [2]string
	// ReadyDelay, when set, is every pod's start-up delay on kwok (a Go
	// duration), whatever the cluster's POD_READY_DELAY: replicas come
	// back at the same pace in every case.
	ReadyDelay string
}

// Replicas is how many pods the layout has.
func (l PartitionLayout) Replicas() int { return len(l.Zones) * l.Partitions }

// StatefulSetName is the name of zone's StatefulSet.
func (l PartitionLayout) StatefulSetName(zone string) string { return l.App + "-" + zone }

// PodName is the name of partition p's replica in zone.
func (l PartitionLayout) PodName(zone string, p int) string {
	return fmt.Sprintf("%s-%d", l.StatefulSetName(zone), p)
}

// PodNameRegex captures a pod's partition from its name, as
// grafana/rollout-operator's podNamePartitionRegex for Mimir's ingesters:
// "ingester-zone-[a-z]-([0-9]+)".
func (l PartitionLayout) PodNameRegex() string { return l.App + "-zone-[a-z]-([0-9]+)" }

// Labels are the layout's pods' selector labels.
func (l PartitionLayout) Labels() map[string]string { return map[string]string{"app": l.App} }

// StatefulSets are the layout's StatefulSets, one per zone.
func (l PartitionLayout) StatefulSets() []*appsv1.StatefulSet {
	var annotations map[string]string
	if l.ReadyDelay != "" {
		annotations = map[string]string{ReadyDelayAnnotation: l.ReadyDelay}
	}
	out := make([]*appsv1.StatefulSet, 0, len(l.Zones))
	for _, z := range l.Zones {
		lbls := map[string]string{"app": l.App, "zone": z}
		w := builders.StatefulSet(l.StatefulSetName(z)).Namespace(l.Namespace).Labels(lbls).PodLabels(lbls).
			PodAnnotations(annotations).Replicas(int32(l.Partitions)).ParallelPodManagement().
			Containers(corev1.Container{Name: l.App, Image: l.App + ":e2e"}).
			RequireNodeLabel(ZoneKey, z).Spread(corev1.LabelHostname, corev1.ScheduleAnyway)
		if l.NodeLabel[0] != "" {
			w.RequireNodeLabel(l.NodeLabel[0], l.NodeLabel[1])
		}
		out = append(out, w.Obj())
	}
	return out
}

// ByPartition is the partition budget: at most maxUnavailable replicas of
// a partition down, the partition read from the pod name; minReadySeconds
// as given.
func (l PartitionLayout) ByPartition(maxUnavailable, minReadySeconds int32) policyv1alpha1.TopologyDisruptionBudgetSpec {
	return policyv1alpha1.TopologyDisruptionBudgetSpec{
		Selector:        policyv1alpha1.SetAsLabelSelector(l.Labels()),
		Partition:       &policyv1alpha1.PartitionSource{PodNameRegex: l.PodNameRegex()},
		MaxUnavailable:  ptr.To(intstr.FromInt32(maxUnavailable)),
		MinReadySeconds: minReadySeconds,
	}
}

// ByZone is a zone budget: any number of a zone's pods down
// (maxUnavailable 100%), in at most maxDisruptedDomains zones at once.
func (l PartitionLayout) ByZone(maxDisruptedDomains int32) policyv1alpha1.TopologyDisruptionBudgetSpec {
	return policyv1alpha1.TopologyDisruptionBudgetSpec{
		Selector:            policyv1alpha1.SetAsLabelSelector(l.Labels()),
		TopologyKey:         ZoneKey,
		MaxUnavailable:      ptr.To(intstr.FromString("100%")),
		MaxDisruptedDomains: ptr.To(maxDisruptedDomains),
	}
}

// OnePDB is a policy/v1 PodDisruptionBudget over every pod of the layout
// with maxUnavailable 1.
func (l PartitionLayout) OnePDB(name string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: l.Labels()},
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
		},
	}
}

// zoneLetter is "a" for "zone-a", for compact evidence.
func zoneLetter(zone string) string { return strings.TrimPrefix(zone, "zone-") }
