//go:build integration

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

package webhook_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

var _ = Describe("A refusal as clients read it", func() {
	It("reaches the Eviction API's client as core's own refusal does: 429 with the DisruptionBudget cause, at once (no Retry-After for client-go to wait on)", func() {
		ns := newNamespace()
		w := newWorld(ns, 2)
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())

		err := evict(w.Pods["zone-a"][1])
		Expect(err).To(beTooManyRequests())
		var status apierrors.APIStatus
		Expect(errors.As(err, &status)).To(BeTrue())
		details := status.Status().Details
		Expect(details).NotTo(BeNil())
		Expect(details.Causes).To(ContainElement(HaveField("Type", policyv1.DisruptionBudgetCause)))
		// With a Retry-After, client-go retries inside Evict (up to ten
		// times) and the caller sees the 429 only a minute later.
		_, delayed := apierrors.SuggestsClientDelay(err)
		Expect(delayed).To(BeFalse(), "a retry hint in %v", err)
	})
})
