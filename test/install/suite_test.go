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

// Package install_test installs tdb-operator the way users do, on a fresh
// local kwok cluster (hack/cluster: the real kube-apiserver, controller-manager
// and scheduler v1.37.2): config/default and its overlays built by the pinned
// kustomize are checked object by object by the API server in a server-side
// dry run, then `make deploy` applies config/default for real and
// `make undeploy` removes it.
//
// What a kwok cluster cannot show: no container runs, so the manager never
// starts (kwok marks its pods Running and Ready without running them). The
// suite checks what the API server, the scheduler, the disruption controller
// and the garbage collector do with the install; the operator's own start-up
// (certificates, webhook) is tested by test/integration/certs and the e2e
// suite.
//
// Run: make test-install (KUSTOMIZE names the pinned binary).
// TDB_INSTALL_KEEP_CLUSTER=1 leaves the cluster up.
package install_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// clusterName and apiServerPort are this suite's own, so it runs next to
// the e2e suite's cluster (tdb-e2e) and the demo's (tdb).
const (
	clusterName   = "tdb-install"
	apiServerPort = 16443
)

var (
	cluster   *kwokenv.Cluster
	k8s       client.Client
	kustomize string
)

func TestInstall(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "tdb-operator install (kustomize on a kwok cluster, server-side dry run, make deploy/undeploy)")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	kustomize = os.Getenv("KUSTOMIZE")
	Expect(kustomize).NotTo(BeEmpty(), "KUSTOMIZE must name the pinned kustomize: run `make test-install`")
	Expect(kustomize).To(BeAnExistingFile())

	By("bringing up a fresh cluster " + clusterName + " (2 zones x 2 nodes, API server on port 16443)")
	cluster = fixture.FreshCluster(clusterName, fmt.Sprintf("KUBE_APISERVER_PORT=%d", apiServerPort), "ZONES=2", "NODES_PER_ZONE=2")
	var err error
	k8s, err = kwokenv.NewClient(cluster.Kubeconfig, apiextensionsv1.AddToScheme)
	Expect(err).NotTo(HaveOccurred())

	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
}, NodeTimeout(10*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	fixture.TearDown(cluster, "TDB_INSTALL_KEEP_CLUSTER", false)
}, NodeTimeout(5*time.Minute))

// build runs the pinned kustomize on a directory under config/.
func build(dir string) []byte {
	cmd := exec.Command(kustomize, "build", filepath.Join(kwokenv.Root(), "config", dir))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	Expect(cmd.Run()).To(Succeed(), "kustomize build config/%s: %s", dir, errOut.String())
	return out.Bytes()
}

// make runs a make target of the repository against the cluster.
func makeTarget(ctx context.Context, args ...string) string {
	cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = kwokenv.Root()
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig,
		"KUBECTL="+filepath.Join(kwokenv.BinDir(), "kubectl"), "KUSTOMIZE="+kustomize)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "make %v:\n%s", args, out)
	return string(out)
}

// objectsOf splits a kustomize build into objects.
func objectsOf(stream []byte) []*unstructured.Unstructured {
	objs, err := decode(stream)
	Expect(err).NotTo(HaveOccurred())
	return objs
}
