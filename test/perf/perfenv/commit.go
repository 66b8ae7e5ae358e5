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

package perfenv

import (
	"os/exec"
	"strings"

	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// Commit names the tree a bench ran: the short commit, with "-dirty" when
// the working tree has changes ("" outside a git checkout).
func Commit() string {
	out, err := exec.Command("git", "-C", kwokenv.Root(), "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(out))
	if st, _ := exec.Command("git", "-C", kwokenv.Root(), "status", "--porcelain").Output(); len(st) > 0 {
		s += "-dirty"
	}
	return s
}
