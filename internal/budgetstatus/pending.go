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

package budgetstatus

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// Pending is what the status controller of a process knows of each budget
// that its status does not show yet, shared with the process's eviction
// webhook: whether an event (a pod, node or workload change) came after the
// cache read of the last pass that left the status current, and which
// records a live read confirmed gone. The webhook recomputes a status that
// refuses only while it is behind, with those confirmations.
type Pending struct {
	mu     sync.Mutex
	events map[types.NamespacedName]uint64
	// behind holds the budgets with an event no finished pass has read.
	behind map[types.NamespacedName]uint64
	gone   map[types.NamespacedName]map[budget.RecordKey]bool
}

// Touch notes an event of the budget, queued for a pass.
func (p *Pending) Touch(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.events == nil {
		p.events = map[types.NamespacedName]uint64{}
		p.behind = map[types.NamespacedName]uint64{}
	}
	p.events[key]++
	p.behind[key] = p.events[key]
}

// Begin is called by a pass before it reads the cache; Done, with what it
// returned, once the pass has left the status current (written, or found
// so): the status is then behind only if an event came meanwhile.
func (p *Pending) Begin(key types.NamespacedName) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.events[key]
}

// Events is how many events of the budget this process has noted: a
// computation made after reading it has seen the cache at least as it was
// at that event, and stays the same until the next one (the webhook's
// recomputation is reused while it does).
func (p *Pending) Events(key types.NamespacedName) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.events[key]
}

// Done marks the status current up to the events Begin returned (see
// Begin).
func (p *Pending) Done(key types.NamespacedName, seen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.behind[key]; ok && b <= seen {
		delete(p.behind, key)
	}
}

// Behind says whether an event of the budget came after the cache read of
// the last pass that left its status current.
func (p *Pending) Behind(key types.NamespacedName) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.behind[key]
	return ok
}

// ConfirmGone remembers records whose pod a live read found gone (or
// replaced under its name): a pod once gone never returns.
func (p *Pending) ConfirmGone(key types.NamespacedName, gone map[budget.RecordKey]bool) {
	if len(gone) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone == nil {
		p.gone = map[types.NamespacedName]map[budget.RecordKey]bool{}
	}
	if p.gone[key] == nil {
		p.gone[key] = map[budget.RecordKey]bool{}
	}
	for k := range gone {
		p.gone[key][k] = true
	}
}

// Gone returns, as a copy, the records of the budget confirmed gone.
func (p *Pending) Gone(key types.NamespacedName) map[budget.RecordKey]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[budget.RecordKey]bool, len(p.gone[key]))
	for k := range p.gone[key] {
		out[k] = true
	}
	return out
}

// Keep forgets the confirmations of records no longer in the budget's
// status.
func (p *Pending) Keep(key types.NamespacedName, records map[budget.RecordKey]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.gone[key] {
		if !records[k] {
			delete(p.gone[key], k)
		}
	}
	if len(p.gone[key]) == 0 {
		delete(p.gone, key)
	}
}

// Forget drops everything of a deleted budget.
func (p *Pending) Forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.events, key)
	delete(p.behind, key)
	delete(p.gone, key)
}
