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

// Package compat_test runs tdb-operator on one Kubernetes minor of the
// support matrix (docs/install.md#supported-kubernetes-versions), on a fresh
// local kwok cluster whose kube-apiserver, kube-controller-manager,
// kube-scheduler and kubectl are that minor's: the installs (config/default
// and the Helm chart) accepted by its API server in a server-side dry run,
// the zone label its mirrored PDBs select by (set by the API server from
// 1.35, by the operator before), and a concurrent kubectl drain under a
// budget with mirrored PDBs, the budget held and each mirror selecting its
// zone's pods. The CRD's validation on the same minor is
// test/integration/controller's (label api-validation) run on its
// kube-apiserver.
//
// Run: make test-compat, which runs it once per minor of the matrix. It
// reads COMPAT_KUBE_BIN (the minor's binaries, bin/k8s/<version>),
// KUBE_MOD_DIR (the build module hack/cluster/up.sh builds the cluster
// from: hack/tools/kube-1.33 or hack/tools/kube), KUSTOMIZE and HELM.
// TDB_COMPAT_KEEP_CLUSTER=1 keeps the cluster.
package compat_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// The suite's own cluster and ports, so that it runs beside the other
// suites of make test.
const (
	clusterName   = "tdb-compat"
	apiServerPort = 16743
)

var operatorOptions = kwokenv.OperatorOptions{WebhookPort: 20343, MetricsPort: 19180, ProbePort: 19181}

var (
	cluster *kwokenv.Cluster
	op      *kwokenv.Operator
	k8s     client.Client
	cs      kubernetes.Interface
	// kubectl is the minor's own kubectl; version its gitVersion
	// (v1.33.13) and minor its minor version (33).
	kubectl   string
	version   string
	minor     int
	kustomize string
	helm      string
)

func TestCompat(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "tdb-operator on one Kubernetes minor of the support matrix (kwok cluster of that minor)")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	bin := os.Getenv("COMPAT_KUBE_BIN")
	Expect(bin).NotTo(BeEmpty(), "COMPAT_KUBE_BIN must name the minor's binaries (bin/k8s/<version>): run `make test-compat`")
	Expect(os.Getenv("KUBE_MOD_DIR")).NotTo(BeEmpty(), "KUBE_MOD_DIR must name the minor's build module: run `make test-compat`")
	kubectl, version = filepath.Join(bin, "kubectl"), filepath.Base(bin)
	m := regexp.MustCompile(`^v1\.([0-9]+)\.[0-9]+$`).FindStringSubmatch(version)
	Expect(m).NotTo(BeNil(), "COMPAT_KUBE_BIN=%s does not end in a version", bin)
	minor, _ = strconv.Atoi(m[1])
	kustomize, helm = os.Getenv("KUSTOMIZE"), os.Getenv("HELM")
	Expect(kustomize).To(BeAnExistingFile(), "KUSTOMIZE must name the pinned kustomize")
	Expect(helm).To(BeAnExistingFile(), "HELM must name the pinned helm")
	fixture.ExpectPortsFree(operatorOptions.WebhookPort, operatorOptions.MetricsPort, operatorOptions.ProbePort)

	By(fmt.Sprintf("bringing up a fresh cluster %s of Kubernetes %s (3 zones, API server on port %d)", clusterName, version, apiServerPort))
	cluster = fixture.FreshCluster(clusterName, fmt.Sprintf("KUBE_APISERVER_PORT=%d", apiServerPort),
		"ZONES=3", "NODES_PER_ZONE=1", "POD_READY_DELAY=1s", "POD_DELETE_DELAY=0")
	var err error
	k8s, err = kwokenv.NewClient(cluster.Kubeconfig, apiextensionsv1.AddToScheme)
	Expect(err).NotTo(HaveOccurred())
	cs, err = kwokenv.NewClientset(cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	info, err := cs.Discovery().ServerVersion()
	Expect(err).NotTo(HaveOccurred())
	Expect(info.GitVersion).To(Equal(version), "the cluster's API server is not the minor under test")
	AddReportEntry("Kubernetes", info.GitVersion)

	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
}, NodeTimeout(10*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if op != nil {
		op.Stop()
	}
	fixture.TearDown(cluster, "TDB_COMPAT_KEEP_CLUSTER", op != nil)
}, NodeTimeout(5*time.Minute))
