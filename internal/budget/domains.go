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
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// domainCounts accumulates expected and healthy pods per domain.
type domainCounts struct {
	expected map[string]int32
	healthy  map[string]int32
	// warming counts the Ready pods within minReadySeconds.
	warming map[string]int32
}

// newDomainCounts opens a row for every domain a covered pod runs in. Without
// owner scales (an integer minAvailable without topology, as in policy/v1),
// the pods that exist are the expected ones.
func newDomainCounts(placed placement, countPods bool) *domainCounts {
	dc := &domainCounts{expected: map[string]int32{}, healthy: map[string]int32{}, warming: map[string]int32{}}
	for i := range placed.pods {
		pp := &placed.pods[i]
		if pp.kind != inDomain {
			continue
		}
		if countPods {
			dc.expected[pp.domain]++
		} else {
			dc.ensure(pp.domain)
		}
	}
	return dc
}

// ensure opens a row for domain d even if no pod runs there.
func (dc *domainCounts) ensure(d string) {
	if _, ok := dc.expected[d]; !ok {
		dc.expected[d] = 0
	}
}

// addAttribution adds what missing-pod attribution placed in the domains.
func (dc *domainCounts) addAttribution(att attribution) {
	for d, n := range att.expected {
		dc.expected[d] += n
	}
	dc.addEveryDomain(att.everyDomain)
}

// addEveryDomain adds n expected pods to every domain.
func (dc *domainCounts) addEveryDomain(n int32) {
	if n <= 0 {
		return
	}
	for d := range dc.expected {
		dc.expected[d] += n
	}
}

// countHealthy counts the pods that are available (Ready for minReady, not
// being deleted) and not protected by an eviction record. It returns when
// the next Ready pod becomes available (nil: none waits).
func (dc *domainCounts) countHealthy(placed placement, protected map[string]types.UID, minReady time.Duration, now time.Time) (next *time.Time) {
	for i := range placed.pods {
		pp := &placed.pods[i]
		if pp.kind != inDomain || !IsHealthy(pp.pod) {
			continue
		}
		if uid, ok := protected[pp.pod.Name]; ok && (uid == "" || uid == pp.pod.UID) {
			continue
		}
		if at, ok := availableAt(pp.pod, minReady); ok && now.Before(at) {
			dc.warming[pp.domain]++
			if next == nil || at.Before(*next) {
				next = &at
			}
			continue
		}
		dc.healthy[pp.domain]++
	}
	return next
}

// rows returns one row per domain, sorted by name, without allowances.
func (dc *domainCounts) rows() []policyv1alpha1.DomainStatus {
	out := make([]policyv1alpha1.DomainStatus, 0, len(dc.expected))
	for _, d := range sortedKeys(dc.expected) {
		out = append(out, policyv1alpha1.DomainStatus{
			Name:           d,
			ExpectedPods:   dc.expected[d],
			CurrentHealthy: dc.healthy[d],
			WarmingUp:      dc.warming[d],
		})
	}
	return out
}
