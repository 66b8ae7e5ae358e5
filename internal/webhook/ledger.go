package webhook

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
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
//
// Grants on one budget are also written together (group commit): a request
// covered by one budget queues its grant and takes the entry's lock; if an
// earlier holder has already decided and written it, it just answers;
// otherwise it decides every queued grant in turn, each against the status
// the previous ones produced, exactly as one after the other, and writes
// them in one status write. A drain storm of 64 evictions thus costs a few
// writes, not one per grant waited out in a line.
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

	queueMu sync.Mutex
	queue   []*grant
}

// grant is one eviction waiting to be decided and recorded in a budget's
// status. Its outcome is written by the request that holds the entry's lock
// and read by its own request after taking that lock.
type grant struct {
	pod    *corev1.Pod
	domain string
	now    time.Time
	// seen is the budget as the request found it: the domain is the pod's
	// under this version's spec.
	seen *policyv1alpha1.TopologyDisruptionBudget

	done     bool
	decision budget.Decision
	err      error
}

// enqueue adds a grant to the budget's queue; take empties the queue.
func (e *budgetEntry) enqueue(g *grant) {
	e.queueMu.Lock()
	e.queue = append(e.queue, g)
	e.queueMu.Unlock()
}

func (e *budgetEntry) take() []*grant {
	e.queueMu.Lock()
	q := e.queue
	e.queue = nil
	e.queueMu.Unlock()
	return q
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

// newerVersion says whether a is a newer version of the same budget than b.
func newerVersion(a, b *policyv1alpha1.TopologyDisruptionBudget) bool {
	if a.UID != b.UID {
		return false
	}
	va, errA := strconv.ParseUint(a.ResourceVersion, 10, 64)
	vb, errB := strconv.ParseUint(b.ResourceVersion, 10, 64)
	return errA == nil && errB == nil && va > vb
}

// newest returns whichever of the cached budget and the entry's latest is
// newer. resourceVersions are compared as the integers etcd makes them; if
// either is not one, the cached copy is used (a conflict then costs a read).
func (e *budgetEntry) newest(cached *policyv1alpha1.TopologyDisruptionBudget) *policyv1alpha1.TopologyDisruptionBudget {
	latest := e.latest.Load()
	if latest == nil || !newerVersion(latest, cached) {
		return cached
	}
	return latest.DeepCopy()
}
