package webhook

import (
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// ledger serialises, within one process, the decisions that may write a
// budget's status, and remembers the newest version of each budget this
// process has written or read. Without it, concurrent evictions of one budget
// all decide from the same cached version, one wins the write and every
// other one conflicts, re-reads and retries: a drain of 64 pods cost dozens
// of writes and reads per granted eviction. With it, the next request decides
// from the version the last write returned and writes once. Across replicas,
// the status write's resourceVersion precondition still serialises
// everything: the ledger only saves work, safety never depends on it.
type ledger struct {
	mu      sync.Mutex
	budgets map[types.NamespacedName]*budgetEntry
}

type budgetEntry struct {
	sync.Mutex
	// latest is the newest version this process knows. It is written under
	// the entry's lock and read without it (to refuse early); a stored
	// object is never modified.
	latest atomic.Pointer[policyv1alpha1.TopologyDisruptionBudget]
}

// entry returns the budget's entry, unlocked.
func (l *ledger) entry(key types.NamespacedName) *budgetEntry {
	l.mu.Lock()
	if l.budgets == nil {
		l.budgets = map[types.NamespacedName]*budgetEntry{}
	}
	e := l.budgets[key]
	if e == nil {
		e = &budgetEntry{}
		l.budgets[key] = e
	}
	l.mu.Unlock()
	return e
}

// newest returns whichever of the cached budget and the entry's latest is
// newer. resourceVersions are compared as the integers etcd makes them; if
// either is not one, the cached copy is used (a conflict then costs a read).
func (e *budgetEntry) newest(cached *policyv1alpha1.TopologyDisruptionBudget) *policyv1alpha1.TopologyDisruptionBudget {
	latest := e.latest.Load()
	if latest == nil || latest.UID != cached.UID {
		return cached
	}
	a, errA := strconv.ParseUint(cached.ResourceVersion, 10, 64)
	b, errB := strconv.ParseUint(latest.ResourceVersion, 10, 64)
	if errA != nil || errB != nil || a >= b {
		return cached
	}
	return latest.DeepCopy()
}
