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

package snapshot

import (
	"context"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// An apps/v1 StatefulSet's owner says where its ordinals start (0 unless
// spec.ordinals.start is set), so that its missing pods can be named;
// other controllers say nothing.
func TestControllersCarryAStatefulSetsOrdinalStart(t *testing.T) {
	later := builders.StatefulSet("later").Namespace("ns").Replicas(3).PodLabels(map[string]string{"app": "web"}).Obj()
	later.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 3}
	plain := builders.StatefulSet("plain").Namespace("ns").Replicas(3).PodLabels(map[string]string{"app": "web"}).Obj()
	deploy := builders.Deployment("deploy").Namespace("ns").Replicas(2).PodLabels(map[string]string{"app": "web"}).Obj()
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(later, plain, deploy).Build()
	owners, err := (&Gatherer{Cache: c}).Controllers(context.Background(), "ns", labels.SelectorFromSet(labels.Set{"app": "web"}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range owners {
		got[o.Name] = "none"
		if o.OrdinalStart != nil {
			got[o.Name] = strconv.Itoa(int(*o.OrdinalStart))
		}
	}
	want := map[string]string{"later": "3", "plain": "0", "deploy": "none"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: ordinal start %s, want %s (all: %v)", name, got[name], w, got)
		}
	}
}
