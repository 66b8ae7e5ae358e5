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
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// closedPortKubeconfig writes a kubeconfig whose API server is a local
// port nothing listens on.
func closedPortKubeconfig() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := l.Addr().String()
	Expect(l.Close()).To(Succeed())
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: closed
  cluster: {server: "https://%s", insecure-skip-tls-verify: true}
users:
- name: nobody
  user: {token: nothing}
contexts:
- name: closed
  context: {cluster: closed, user: nobody, namespace: default}
current-context: closed
`, addr)
	Expect(os.WriteFile(path, []byte(config), 0o600)).To(Succeed())
	return path
}

var _ = Describe("exit status 2 on errors", func() {
	It("an unknown node, an unknown pod, a bad flag and an API server that is not there: exit 2 and `error: ...` on stderr",
		SpecTimeout(2*time.Minute), func(ctx SpecContext) {
			expectError := func(args ...string) {
				r := tdb(ctx, args...)
				Expect(r.Exit).To(Equal(2), "%s", r)
				Expect(r.Stderr).To(ContainSubstring("error:"), "%s", r)
			}
			By("unknown node")
			expectError("can-drain", "no-such-node", "--ignore-daemonsets")
			expectError("can-drain", "no-such-node", "--ignore-daemonsets", "-o", "json")
			expectError("plan", "no-such-node", "--ignore-daemonsets")
			By("unknown pod")
			expectError("why", "no-such-pod", "-n", "default")
			expectError("why", "no-such-pod", "-n", "default", "-o", "json")
			By("bad flag")
			expectError("can-drain", "--no-such-flag")

			By("a kubeconfig whose API server port is closed")
			bad := closedPortKubeconfig()
			for _, args := range [][]string{
				{"can-drain", "some-node", "--ignore-daemonsets"},
				{"can-drain", "some-node", "--ignore-daemonsets", "--verify", "-o", "json"},
				{"why", "some-pod"},
				{"plan", "some-node"},
				{"status", "-A"},
			} {
				start := time.Now()
				expectError(append(args, "--kubeconfig", bad, "--request-timeout=10s")...)
				Expect(time.Since(start)).To(BeNumerically("<", 30*time.Second), "giving up on a closed port took too long")
			}
		})
})
