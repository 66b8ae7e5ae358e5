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

// Package e2e_test is tdb-operator's end-to-end suite: a local kwok cluster
// (hack/cluster) with the real kube-apiserver, kube-controller-manager and
// kube-scheduler v1.37.2, the operator's manager running as a local process
// behind a URL-registered eviction webhook, and real `kubectl drain`
// processes. Every spec works in a namespace of its own on nodes of its own
// (added with a per-spec name prefix and pinned with a node label), measures
// per-zone unavailability with an independent watcher while it disrupts, and
// removes its namespace and nodes at the end.
//
// Run: go test -tags e2e -count=1 -timeout 40m ./test/e2e/ -ginkgo.v
// (make test-e2e). TDB_E2E_KEEP_CLUSTER=1 leaves the cluster and the
// operator's log behind for inspection.
package e2e_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const clusterName = "tdb-e2e"

// operatorOptions: fixed ports, distinct from the demo's (9443/8080/8081),
// so the suite can run next to `make demo`.
var operatorOptions = kwokenv.OperatorOptions{
	WebhookPort: 19443, MetricsPort: 18080, ProbePort: 18081,
	Args: []string{"--zap-log-level=debug"},
}

var (
	cluster *kwokenv.Cluster
	// op is the running operator, nil while it is down (a killed Operator
	// must not be stopped again).
	op  *kwokenv.Operator
	k8s client.Client
	cs  kubernetes.Interface
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "tdb-operator end to end (kwok cluster, real control plane, kubectl drain)")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	start := time.Now()
	fixture.ExpectPortsFree(operatorOptions.WebhookPort, operatorOptions.MetricsPort, operatorOptions.ProbePort)
	By("building the manager")
	_, err := kwokenv.BuildManager()
	Expect(err).NotTo(HaveOccurred())

	By("bringing up a fresh cluster " + clusterName + " (3 zones, real kube-apiserver, controller-manager, scheduler)")
	// One node per zone that no spec uses: every spec adds, pins to, drains
	// and deletes nodes of its own.
	cluster = fixture.FreshCluster(clusterName, "ZONES=3", "NODES_PER_ZONE=1", "POD_READY_DELAY=2s", "POD_DELETE_DELAY=0")
	k8s, err = kwokenv.NewClient(cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cs, err = kwokenv.NewClientset(cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())

	By("starting the operator (webhook https://127.0.0.1:19443)")
	startOperator()
	GinkgoWriter.Printf("suite set up in %s; KUBECONFIG=%s; operator log %s\n",
		time.Since(start).Round(time.Second), cluster.Kubeconfig, op.LogPath)

	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	SetDefaultConsistentlyDuration(3 * time.Second)
	SetDefaultConsistentlyPollingInterval(250 * time.Millisecond)
}, NodeTimeout(15*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if op != nil {
		op.Stop()
		op = nil
	}
	fixture.TearDown(cluster, "TDB_E2E_KEEP_CLUSTER", true)
}, NodeTimeout(5*time.Minute))

// suiteEnv is the suite's cluster and clients, for a spec's fixture.Pool.
func suiteEnv() fixture.Env {
	return fixture.Env{Cluster: cluster, Client: k8s, Clientset: cs}
}

// startOperator starts the operator with the suite's ports and waits until
// its webhook answers.
func startOperator() {
	var err error
	op, err = kwokenv.StartOperator(cluster, operatorOptions)
	Expect(err).NotTo(HaveOccurred())
}
