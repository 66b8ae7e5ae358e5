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
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// forge sends the webhook an AdmissionReview for an eviction of ns/name
// straight over TLS, as a pod that can reach the webhook port could, and
// returns the webhook's answer.
func forge(ns, name string) *admissionv1.AdmissionResponse {
	ev, err := json.Marshal(policyv1.Eviction{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	})
	Expect(err).NotTo(HaveOccurred())
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: types.UID("forged"), Kind: metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"},
			Resource:    metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			SubResource: "eviction", Namespace: ns, Name: name, Operation: admissionv1.Create,
			Object: runtime.RawExtension{Raw: ev},
		},
	})
	Expect(err).NotTo(HaveOccurred())
	wo := env.WebhookInstallOptions
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(wo.LocalServingCAData)).To(BeTrue())
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: wo.LocalServingHost}}}
	url := fmt.Sprintf("https://%s%s", net.JoinHostPort(wo.LocalServingHost, strconv.Itoa(wo.LocalServingPort)), evictionwebhook.Path)
	resp, err := hc.Post(url, "application/json", bytes.NewReader(review))
	Expect(err).NotTo(HaveOccurred())
	body, err := io.ReadAll(resp.Body)
	Expect(resp.Body.Close()).To(Succeed())
	Expect(err).NotTo(HaveOccurred())
	var answer admissionv1.AdmissionReview
	Expect(json.Unmarshal(body, &answer)).To(Succeed(), "%s", body)
	Expect(answer.Response).NotTo(BeNil(), "%s", body)
	return answer.Response
}

var _ = Describe("Who may call the webhook", func() {
	It("refuses an AdmissionReview sent from a pod's address, charging nothing in the namespace it names; once no pod holds the address, reviews from it are decided again", func() {
		ns := newNamespace()
		w := newWorld(ns, 3)
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		target := w.Pods["zone-a"][0]

		By("a pod in another namespace holds the address the review comes from")
		other := newNamespace()
		forger := builders.Pod("forger").Namespace(other).OnNode(w.Nodes["zone-b"][0]).Container(builders.ContainerName, "forger").
			Running().IPs("127.0.0.1").Obj()
		status := forger.Status // a create drops it
		Expect(k8s.Create(ctx, forger)).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, forger, client.GracePeriodSeconds(0)))).To(Succeed())
		})
		forger.Status = status
		Expect(k8s.Status().Update(ctx, forger)).To(Succeed())

		Eventually(func(g Gomega) {
			r := forge(ns, target.Name)
			g.Expect(r.Allowed).To(BeFalse())
			g.Expect(r.Result.Code).To(BeEquivalentTo(http.StatusForbidden))
			g.Expect(r.Result.Message).To(ContainSubstring("came from the address of pod " + other + "/forger"))
		}).Should(Succeed())
		Expect(records(tdb)).To(BeEmpty())
		Expect(allowedByZone(tdb)()).To(Equal([]int32{1, 1, 1}))

		By("the pod goes: the address is no pod's, and a review from it is decided and charged")
		Expect(k8s.Delete(ctx, forger, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(forger), &corev1.Pod{}))
		}).Should(BeTrue())
		Eventually(func() bool { return forge(ns, target.Name).Allowed }).Should(BeTrue())
		Expect(records(tdb)).To(Equal([]string{target.Name + "@zone-a"}))
	})
})
