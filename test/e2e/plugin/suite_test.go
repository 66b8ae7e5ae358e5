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

// Package plugin_test is the end-to-end test of the kubectl plugin
// kubectl-tdb (cmd/kubectl-tdb) on a local kwok cluster of its own
// (tdb-plugin: the real kube-apiserver, kube-controller-manager and
// kube-scheduler, the operator's manager as a local process behind its
// eviction webhook). The plugin is built in the suite's setup and run the way
// a person runs it, as `kubectl tdb ...` found on PATH by kubectl.
//
// Its predictions are held against the cluster itself: every pod's
// evictableNow against a server-side dry-run eviction (through the API
// server, the operator's webhook and core's PodDisruptionBudget check) taken
// while nothing changes, the pods it lists against the pods `kubectl drain
// --dry-run=server` would evict, its drain plans against real concurrent
// `kubectl drain` processes that must meet no refusal, and its budget status
// against the TopologyDisruptionBudgets' own status.
//
// Run: go test -tags e2e -count=1 -timeout 15m ./test/e2e/plugin/ -ginkgo.v
// (make test-e2e-plugin). TDB_E2E_KEEP_CLUSTER=1 leaves the cluster behind;
// TDB_PLUGIN_E2E_BIN=/path/to/kubectl-tdb tests that binary instead of
// building ./cmd/kubectl-tdb.
package plugin_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	clusterName = "tdb-plugin"
	// suiteTimeout bounds the whole suite (setup, every spec, teardown)
	// unless -ginkgo.timeout says otherwise; it normally takes about 3 minutes.
	suiteTimeout = 10 * time.Minute
)

// operatorOptions: fixed ports, distinct from the demo's, the e2e suite's
// and the Karpenter e2e's, so the suites can run side by side.
var operatorOptions = kwokenv.OperatorOptions{
	WebhookPort: 19843, MetricsPort: 18680, ProbePort: 18681,
	Args: []string{"--zap-log-level=info"},
}

var (
	cluster *kwokenv.Cluster
	op      *kwokenv.Operator
	k8s     client.Client
	cs      kubernetes.Interface
	// pluginDir holds the kubectl-tdb binary and is put first on kubectl's
	// PATH; pluginTmp is removed at the end when the suite made it.
	pluginDir, pluginTmp string
)

func TestPlugin(t *testing.T) {
	RegisterFailHandler(Fail)
	// The suite's clients log nothing worth reading.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	suiteConfig, reporterConfig := GinkgoConfiguration()
	// Ginkgo's default is an hour; keep the suite's own bound unless the
	// caller asked for another with -ginkgo.timeout.
	if suiteConfig.Timeout == time.Hour {
		suiteConfig.Timeout = suiteTimeout
	}
	RunSpecs(t, "kubectl-tdb end to end (kwok cluster, real control plane, operator webhook, kubectl drain)", suiteConfig, reporterConfig)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	start := time.Now()
	fixture.ExpectPortsFree(operatorOptions.WebhookPort, operatorOptions.MetricsPort, operatorOptions.ProbePort)

	By("building the plugin (go build -o <tmp>/kubectl-tdb ./cmd/kubectl-tdb)")
	buildPlugin(ctx)
	By("building the manager")
	_, err := kwokenv.BuildManager()
	Expect(err).NotTo(HaveOccurred())

	By("bringing up a fresh cluster " + clusterName + " (3 zones, no nodes: every spec adds its own)")
	cluster = fixture.FreshCluster(clusterName, "ZONES=3", "NODES_PER_ZONE=0", "POD_READY_DELAY=1s", "POD_DELETE_DELAY=0")
	k8s, err = kwokenv.NewClient(cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cs, err = kwokenv.NewClientset(cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())

	By(fmt.Sprintf("starting the operator (webhook https://127.0.0.1:%d)", operatorOptions.WebhookPort))
	op, err = kwokenv.StartOperator(cluster, operatorOptions)
	Expect(err).NotTo(HaveOccurred())

	By("kubectl finds the plugin: `kubectl tdb version`")
	r := tdb(ctx, "version")
	Expect(r.Exit).To(Equal(0), "%s", r)
	Expect(strings.TrimSpace(r.Stdout)).NotTo(BeEmpty(), "%s", r)

	GinkgoWriter.Printf("suite set up in %s; KUBECONFIG=%s; plugin %s; operator log %s\n",
		time.Since(start).Round(time.Second), cluster.Kubeconfig, filepath.Join(pluginDir, "kubectl-tdb"), op.LogPath)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
}, NodeTimeout(8*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if pluginTmp != "" {
		Expect(os.RemoveAll(pluginTmp)).To(Succeed())
	}
	if op != nil {
		op.Stop()
		op = nil
	}
	fixture.TearDown(cluster, "TDB_E2E_KEEP_CLUSTER", true)
}, NodeTimeout(3*time.Minute))

// suiteEnv is the suite's cluster and clients, for a spec's fixture.Pool.
func suiteEnv() fixture.Env {
	return fixture.Env{Cluster: cluster, Client: k8s, Clientset: cs}
}

// buildPlugin builds ./cmd/kubectl-tdb into a directory of its own, or takes
// the binary TDB_PLUGIN_E2E_BIN names.
func buildPlugin(ctx context.Context) {
	if bin := os.Getenv("TDB_PLUGIN_E2E_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		Expect(err).NotTo(HaveOccurred())
		Expect(filepath.Base(abs)).To(Equal("kubectl-tdb"), "kubectl finds the plugin by its name")
		Expect(abs).To(BeAnExistingFile())
		pluginDir = filepath.Dir(abs)
		return
	}
	var err error
	pluginTmp, err = os.MkdirTemp("", "kubectl-tdb-e2e-")
	Expect(err).NotTo(HaveOccurred())
	pluginDir = pluginTmp
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(pluginDir, "kubectl-tdb"), "./cmd/kubectl-tdb")
	cmd.Dir = kwokenv.Root()
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build ./cmd/kubectl-tdb:\n%s", out)
}
