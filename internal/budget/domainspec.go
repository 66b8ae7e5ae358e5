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
	"encoding/json"
	"fmt"
	"hash/fnv"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// A spec change never loosens the arithmetic. An eviction record names the
// domain its grant charged, under the spec of the time. Once topologyKey or
// nodeSelectorTerm change, that name may mean another set of nodes, or no
// domain at all: attributed there, the record's missing pod would open a
// row the spec does not have and be missing from the domain it really left
// (with topologyKey removed, a zone row next to "all", and a second
// eviction allowed under maxUnavailable: 1). Each record therefore carries
// the DomainSpec it was charged under; a record of another one tells no
// domain:
//
//   - its pod, while it exists, counts where it is now, under the current
//     spec (being deleted, it explains its missing pod there);
//   - once its pod is gone, its missing pod counts against every domain of
//     the budget, as a missing pod of unknown place does, until the owner has
//     its replacement scheduled; it never opens a row.
//
// A record without DomainSpec (written before records carried it) is taken
// as of the current spec. The selector does not name domains: a record of a
// pod the new selector no longer matches is dropped with its controller.

// anyDomain stands, inside a computation, for the domain of a gone record
// of another spec: its missing pod counts against every domain. It is never
// written.
const anyDomain = "\x00any"

// DomainSpecOf identifies how the spec names domains: a hash of topologyKey,
// nodeSelectorTerm and partition (only when set: a spec without it hashes
// as before partitions existed). Records carry it (DisruptedPod.DomainSpec).
func DomainSpecOf(spec *policyv1alpha1.TopologyDisruptionBudgetSpec) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(spec.TopologyKey))
	_, _ = h.Write([]byte{0})
	if spec.NodeSelectorTerm != nil {
		term, err := json.Marshal(spec.NodeSelectorTerm)
		if err != nil {
			// A term that does not encode cannot be compared: no record
			// will match it, which only makes records count everywhere.
			term = []byte(err.Error())
		}
		_, _ = h.Write(term)
	}
	if spec.Partition != nil {
		src, err := json.Marshal(spec.Partition)
		if err != nil {
			src = []byte(err.Error())
		}
		_, _ = h.Write([]byte("\x00partition"))
		_, _ = h.Write(src)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// recordOfSpec says whether a record's domain was named under the spec
// whose DomainSpec is current.
func recordOfSpec(r policyv1alpha1.DisruptedPod, current string) bool {
	return r.DomainSpec == "" || r.DomainSpec == current
}
