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

package builders

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// Owner is an object that can own others: a workload, a node, a config map
// or another built-in kind.
type Owner interface {
	metav1.Object
	runtime.Object
}

// RefTo returns an ownerReference to owner, a built-in kind (apps/v1
// workloads, core/v1 objects), for ControlledBy and ReferencedBy. Its kind
// comes from client-go's scheme, not from owner's TypeMeta, which typed
// clients leave empty; for another kind the call panics, as it is a mistake
// in the test: write the reference out instead.
func RefTo(owner Owner) metav1.OwnerReference {
	gvks, _, err := scheme.Scheme.ObjectKinds(owner)
	if err != nil || len(gvks) == 0 {
		panic(fmt.Sprintf("builders: no kind for %T: %v", owner, err))
	}
	return metav1.OwnerReference{
		APIVersion: gvks[0].GroupVersion().String(), Kind: gvks[0].Kind,
		Name: owner.GetName(), UID: owner.GetUID(),
	}
}
