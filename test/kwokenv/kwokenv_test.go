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

package kwokenv

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The suites look for the binaries where hack/build-k8s-binaries.sh puts
// them: bin/k8s/<the k8s.io/kubernetes version hack/tools/kube selects>.
func TestBinDirIsWhereTheBuildPutsThem(t *testing.T) {
	cmd := exec.Command("go", "list", "-mod=readonly", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
	cmd.Dir = filepath.Join(Root(), "hack", "tools", "kube")
	cmd.Env = append(cmd.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in hack/tools/kube: %v", err)
	}
	want := filepath.Join(Root(), "bin", "k8s", strings.TrimSpace(string(out)))
	if got := BinDir(); got != want {
		t.Errorf("BinDir() = %s, want %s", got, want)
	}
}
