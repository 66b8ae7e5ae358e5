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

package tombstone

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func node(name, zone string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"topology.kubernetes.io/zone": zone}}}
}

func TestDeletedNodesAreRememberedBoundedly(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	n := New(clk)
	n.Deleted(node("n1", "zone-a"))
	if l, ok := n.Labels("n1"); !ok || l["topology.kubernetes.io/zone"] != "zone-a" {
		t.Fatalf("Labels(n1) = %v, %v; want zone-a", l, ok)
	}
	if _, ok := n.Labels("n2"); ok {
		t.Errorf("a node never deleted is known")
	}
	n.Exists("n1")
	if _, ok := n.Labels("n1"); ok {
		t.Errorf("a node created again under the name is still taken for deleted")
	}
	n.Deleted(node("n1", "zone-a"))
	clk.Step(DefaultTTL + time.Second)
	if _, ok := n.Labels("n1"); ok {
		t.Errorf("labels kept past the TTL")
	}
	n.maxEntries = 3
	for i := 0; i < 10; i++ {
		clk.Step(time.Second)
		n.Deleted(node(fmt.Sprintf("m%d", i), "zone-b"))
	}
	if got := n.Len(); got != 3 {
		t.Errorf("entries = %d, want the bound 3", got)
	}
	if _, ok := n.Labels("m9"); !ok {
		t.Errorf("the newest deletion was dropped")
	}
}
