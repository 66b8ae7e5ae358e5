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
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Karpenter is the real Karpenter, its kwok cloud provider built by
// hack/build-karpenter.sh, running as a local process against a local
// cluster: it creates Node objects that the cluster's kwok controller makes
// Ready, and disrupts them (consolidation, drift) through the Eviction API.
type Karpenter struct {
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	LogPath string
}

// KarpenterOptions configure StartKarpenter.
type KarpenterOptions struct {
	// MetricsPort and ProbePort (Karpenter binds them on every interface).
	MetricsPort, ProbePort int
	// LogPath receives Karpenter's output.
	LogPath string
}

// KarpenterDir builds Karpenter (cached) and returns its directory:
// karpenter-kwok and crds/.
func KarpenterDir() (string, error) {
	cmd := exec.Command(filepath.Join(Root(), "hack", "build-karpenter.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building Karpenter: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// StartKarpenter installs Karpenter's CRDs in the cluster and starts its
// kwok provider, with the instance types of
// hack/tools/karpenter/instance-types.json (offered in zone-a, zone-b and
// zone-c), waiting until it is ready. NodePools and the KWOKNodeClass are
// the caller's.
func StartKarpenter(ctx context.Context, c *Cluster, o KarpenterOptions) (*Karpenter, error) {
	dir, err := KarpenterDir()
	if err != nil {
		return nil, err
	}
	apply := c.Kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(dir, "crds"))
	if out, err := apply.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("installing Karpenter's CRDs: %w: %s", err, out)
	}
	wait := c.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/nodepools.karpenter.sh", "crd/nodeclaims.karpenter.sh", "crd/kwoknodeclasses.karpenter.kwok.sh")
	if out, err := wait.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("waiting for Karpenter's CRDs: %w: %s", err, out)
	}
	if o.LogPath == "" {
		o.LogPath = filepath.Join(Root(), "bin", "cluster", "karpenter-"+c.Name+".log")
	}
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(dir, "karpenter-kwok"))
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+c.Kubeconfig,
		// A local process has no in-cluster namespace to elect a leader in.
		"DISABLE_LEADER_ELECTION=true",
		fmt.Sprintf("METRICS_PORT=%d", o.MetricsPort),
		fmt.Sprintf("HEALTH_PROBE_PORT=%d", o.ProbePort),
		"INSTANCE_TYPES_FILE_PATH="+filepath.Join(Root(), "hack", "tools", "karpenter", "instance-types.json"),
		// Provision in seconds rather than the production batching window.
		"BATCH_MAX_DURATION=2s", "BATCH_IDLE_DURATION=500ms",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("starting Karpenter: %w", err)
	}
	k := &Karpenter{cmd: cmd, done: make(chan struct{}), LogPath: o.LogPath}
	go func() { k.exitErr = cmd.Wait(); _ = logf.Close(); close(k.done) }()
	probe := fmt.Sprintf("http://127.0.0.1:%d/readyz", o.ProbePort)
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-k.done:
			return nil, fmt.Errorf("karpenter exited (%w); see %s", k.exitErr, o.LogPath)
		default:
		}
		resp, err := http.Get(probe) //nolint:noctx // a local readiness probe
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return k, nil
			}
		}
		if time.Now().After(deadline) {
			k.Stop()
			return nil, fmt.Errorf("karpenter not ready within 60s; see %s", o.LogPath)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop stops Karpenter with SIGTERM and waits for it.
func (k *Karpenter) Stop() {
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(20 * time.Second):
		_ = k.cmd.Process.Signal(syscall.SIGKILL)
		<-k.done
	}
}
