//go:build e2e

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

package plugin_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// replica is one operator process whose webhook the spec calls directly.
type replica struct {
	name string
	url  string
	http *http.Client
}

// dryRunAllowed sends the replica the AdmissionReview the API server sends
// for a dry-run eviction of ns/pod, and says whether it allows it.
func (r replica) dryRunAllowed(ctx context.Context, ns, pod string) (bool, string) {
	obj, err := json.Marshal(map[string]any{"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata": map[string]any{"name": pod, "namespace": ns}})
	Expect(err).NotTo(HaveOccurred())
	dry := true
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:         types.UID(fmt.Sprintf("agree-%d", time.Now().UnixNano())),
			Kind:        metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"},
			Resource:    metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			SubResource: "eviction",
			Name:        pod, Namespace: ns,
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: obj},
			DryRun:    &dry,
		},
	}
	body, err := json.Marshal(review)
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	Expect(err).NotTo(HaveOccurred(), "calling replica %s", r.name)
	defer func() { _ = resp.Body.Close() }()
	var out admissionv1.AdmissionReview
	Expect(json.NewDecoder(resp.Body).Decode(&out)).To(Succeed())
	Expect(out.Response).NotTo(BeNil())
	msg := ""
	if out.Response.Result != nil {
		msg = out.Response.Result.Message
	}
	return out.Response.Allowed, msg
}

func newReplica(name string, port int) replica {
	ca, err := os.ReadFile(filepath.Join(kwokenv.CertDir(cluster), "ca.crt"))
	Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(ca)).To(BeTrue())
	return replica{name: name, url: fmt.Sprintf("https://127.0.0.1:%d%s", port, evictionwebhook.Path),
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
}

// disagreement is a run of samples in which a pod's answers differed.
type disagreement struct {
	pod        string
	start, end time.Time
	what       string
}

var _ = Describe("Every reader agrees", Serial, func() {
	It("during a drain whose replacements turn Ready, kubectl tdb can-drain and dry-run evictions through each of two replicas agree, up to the status lag",
		SpecTimeout(12*time.Minute), func(ctx SpecContext) {
			By("two replicas with leader election, the second one serving the same certificate on its own port")
			op.Stop()
			op = nil
			args := append(append([]string(nil), operatorOptions.Args...), "--leader-elect", "--leader-election-namespace=tdb-system")
			if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tdb-system"}}); err != nil && !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred())
			}
			first := operatorOptions
			first.Args = args
			a, err := kwokenv.StartOperator(cluster, first)
			Expect(err).NotTo(HaveOccurred())
			Eventually(ctx, func() string {
				var l coordinationv1.Lease
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: "tdb-system", Name: "tdb-operator.policy.tdb.dev"}, &l); err != nil || l.Spec.HolderIdentity == nil {
					return ""
				}
				return *l.Spec.HolderIdentity
			}).ShouldNot(BeEmpty(), "the first replica leads")
			second := kwokenv.OperatorOptions{WebhookPort: operatorOptions.WebhookPort + 1, MetricsPort: operatorOptions.ProbePort + 1,
				ProbePort: operatorOptions.ProbePort + 2, Args: args, NoRegister: true,
				LogPath: filepath.Join(kwokenv.Root(), "bin", "cluster", "operator-"+cluster.Name+"-second.log")}
			b, err := kwokenv.StartOperator(cluster, second)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func(ctx SpecContext) {
				a.Stop()
				b.Stop()
				var err error
				op, err = kwokenv.StartOperator(cluster, operatorOptions)
				Expect(err).NotTo(HaveOccurred())
			}, NodeTimeout(2*time.Minute))
			replicas := []replica{newReplica("leader", first.WebhookPort), newReplica("other", second.WebhookPort)}

			f := newFixture(ctx, "agree", 2)
			lbls := map[string]string{"app": "web"}
			Expect(k8s.Create(ctx, builders.Deployment("web").Namespace(f.NS).Labels(lbls).PodLabels(lbls).
				Containers(corev1.Container{Name: "web", Image: "web:e2e"}).RequireNodeLabel(fixture.PoolLabel, f.Name).
				Spread(kwokenv.ZoneKey, corev1.DoNotSchedule).Spread(corev1.LabelHostname, corev1.ScheduleAnyway).
				Replicas(9).Obj())).To(Succeed())
			f.WaitPodsReady(ctx, "web", 9)
			f.CreateTDB(ctx, "web", zoneTDB("web", intstr.FromInt32(1)))
			f.waitDomains(ctx, "web", allZones(dom{3, 3, 1}))
			old := f.AllNodes()
			f.AddNodes(ctx, 2)

			By("every old node drained at once; meanwhile each pod's answer from can-drain and from both replicas, compared")
			done := make(chan struct{})
			var drainErrs []error
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, n := range old {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := kubectl(ctx, "drain", n, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=5m")
					if r.Exit != 0 {
						mu.Lock()
						drainErrs = append(drainErrs, fmt.Errorf("%s", r))
						mu.Unlock()
					}
				}()
			}
			go func() { wg.Wait(); close(done) }()

			open := map[string]*disagreement{}
			var closed []disagreement
			samples, compared := 0, 0
		loop:
			for {
				select {
				case <-done:
					break loop
				case <-ctx.Done():
					break loop
				default:
				}
				dc, _ := canDrain(ctx, f.AllNodes())
				now := time.Now()
				samples++
				seen := map[string]bool{}
				for _, p := range dc.Pods {
					if p.Namespace != f.NS {
						continue
					}
					seen[p.Name] = true
					answers := []bool{p.EvictableNow}
					what := fmt.Sprintf("can-drain %v (%s)", p.EvictableNow, p.Reason)
					for _, r := range replicas {
						ok, msg := r.dryRunAllowed(ctx, f.NS, p.Name)
						answers = append(answers, ok)
						what += fmt.Sprintf("; %s %v %s", r.name, ok, msg)
					}
					compared++
					agree := answers[0] == answers[1] && answers[1] == answers[2]
					d := open[p.Name]
					switch {
					case !agree && d == nil:
						open[p.Name] = &disagreement{pod: p.Name, start: now, end: now, what: what}
					case !agree:
						d.end = now
					case d != nil:
						d.end = now
						closed = append(closed, *d)
						delete(open, p.Name)
					}
				}
				// A pod gone (evicted) ends its run where it was last seen.
				for name, d := range open {
					if !seen[name] {
						closed = append(closed, *d)
						delete(open, name)
					}
				}
			}
			for _, d := range open {
				closed = append(closed, *d)
			}
			Expect(drainErrs).To(BeEmpty())

			var windows []time.Duration
			for _, d := range closed {
				windows = append(windows, d.end.Sub(d.start))
			}
			sort.Slice(windows, func(i, j int) bool { return windows[i] < windows[j] })
			longest := time.Duration(0)
			if len(windows) > 0 {
				longest = windows[len(windows)-1]
			}
			GinkgoWriter.Printf("agreement: %d can-drain samples, %d pod answers compared (each from can-drain and both replicas), %d disagreements, longest %s\n",
				samples, compared, len(closed), longest)
			for _, d := range closed {
				GinkgoWriter.Printf("  %s for %s: %s\n", d.pod, d.end.Sub(d.start).Round(time.Millisecond), d.what)
			}
			Expect(compared).To(BeNumerically(">", 50), "the drain was sampled")
			// Within the status lag (a pass and its write, under a second
			// here) readers may differ; never for longer.
			Expect(longest).To(BeNumerically("<", 3*time.Second), "a disagreement outlasted the status lag")
		})
})
