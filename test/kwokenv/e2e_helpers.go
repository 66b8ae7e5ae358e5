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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// AddNodesWithPrefix adds n Ready nodes in zone named <prefix>-<zone>-<i>
// (numbered after the highest existing node with that prefix and zone, see
// hack/cluster/add-nodes.sh and its NODE_PREFIX) and then sets labels on
// them. Callers that use different prefixes get disjoint node sets, so a
// test can pin its workload to its own nodes with a node label and drain or
// delete them without touching anyone else's. Calls with the same prefix and
// zone must not run concurrently (the numbering would collide).
func (c *Cluster) AddNodesWithPrefix(ctx context.Context, prefix, zone string, n int, labels map[string]string) ([]string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(Root(), "hack", "cluster", "add-nodes.sh"), zone, fmt.Sprint(n))
	cmd.Dir = Root()
	env := c.env
	if len(env) == 0 {
		env = []string{"CLUSTER_NAME=" + c.Name}
	}
	cmd.Env = append(append(os.Environ(), env...), "NODE_PREFIX="+prefix)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("hack/cluster/add-nodes.sh %s %d (NODE_PREFIX=%s): %w: %s", zone, n, prefix, err, strings.TrimSpace(errOut.String()))
	}
	names := strings.Fields(out.String())
	if len(names) != n {
		return names, fmt.Errorf("add-nodes.sh printed %d node names, want %d: %q", len(names), n, out.String())
	}
	if len(labels) == 0 {
		return names, nil
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := append([]string{"label", "nodes"}, names...)
	for _, k := range keys {
		args = append(args, k+"="+labels[k])
	}
	args = append(args, "--overwrite")
	if b, err := c.Kubectl(ctx, args...).CombinedOutput(); err != nil {
		return names, fmt.Errorf("labelling nodes %v: %w: %s", names, err, strings.TrimSpace(string(b)))
	}
	return names, nil
}
