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

// Package kwokenv drives a local kwok cluster (hack/cluster) and the operator
// running against it as a local process, for the demo and the e2e suite.
package kwokenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/tdb-operator/tdb-operator/hack/localwebhook/registration"
)

// Root is the repository root, found from this file's location.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// BinDir is where hack/build-k8s-binaries.sh puts the binaries of the
// Kubernetes version hack/tools/kube pins.
func BinDir() string { return filepath.Join(Root(), "bin", "k8s", KubeVersion()) }

// kubeRequirement is k8s.io/kubernetes's line in hack/tools/kube/go.mod.
var kubeRequirement = regexp.MustCompile(`(?m)^\s*(?:require\s+)?k8s\.io/kubernetes\s+(v1\.\d+\.\d+)\s*$`)

// KubeVersion is the Kubernetes version the local clusters run: the
// k8s.io/kubernetes version hack/tools/kube pins (v1.37.2, say), "unknown"
// when its go.mod cannot be read.
func KubeVersion() string {
	mod, err := os.ReadFile(filepath.Join(Root(), "hack", "tools", "kube", "go.mod"))
	if m := kubeRequirement.FindSubmatch(mod); err == nil && m != nil {
		return string(m[1])
	}
	return "unknown"
}

// Cluster is a running local cluster.
type Cluster struct {
	Name       string
	Kubeconfig string
	env        []string
}

// Up brings up (or reuses) the named cluster with hack/cluster/up.sh. Extra
// settings (ZONES, NODES_PER_ZONE, POD_READY_DELAY...) come from env.
func Up(name string, env ...string) (*Cluster, error) {
	c := &Cluster{Name: name, env: append([]string{"CLUSTER_NAME=" + name}, env...)}
	out, err := c.script("up.sh")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	c.Kubeconfig = strings.TrimSpace(lines[len(lines)-1])
	if _, err := os.Stat(c.Kubeconfig); err != nil {
		return nil, fmt.Errorf("up.sh did not print a kubeconfig path (got %q): %w", c.Kubeconfig, err)
	}
	return c, nil
}

// Down tears the cluster down.
func (c *Cluster) Down() error {
	_, err := c.script("down.sh")
	return err
}

// DownIfExists tears the named cluster down if a previous run left it.
func (c *Cluster) DownIfExists() error {
	if len(c.env) == 0 {
		c.env = []string{"CLUSTER_NAME=" + c.Name}
	}
	return c.Down()
}

// AddNodes adds n Ready nodes in zone and returns their names.
func (c *Cluster) AddNodes(zone string, n int) ([]string, error) {
	out, err := c.script("add-nodes.sh", zone, fmt.Sprint(n))
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

func (c *Cluster) script(name string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(Root(), "hack", "cluster", name), args...)
	cmd.Dir = Root()
	cmd.Env = append(os.Environ(), c.env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("hack/cluster/%s %s: %w", name, strings.Join(args, " "), err)
	}
	return out.String(), nil
}

// Kubectl returns a kubectl command against the cluster, using the kubectl
// built with the cluster.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(BinDir(), "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	return cmd
}

// Operator is the operator's manager running as a local process.
type Operator struct {
	cmd *exec.Cmd
	// done is closed when the process has exited, with exitErr set.
	done    chan struct{}
	exitErr error
	LogPath string
	probe   string
}

// OperatorOptions configure StartOperator.
type OperatorOptions struct {
	// WebhookPort, MetricsPort and ProbePort on 127.0.0.1 (defaults 9443,
	// 8080, 8081).
	WebhookPort, MetricsPort, ProbePort int
	// LogPath receives the manager's output (default bin/cluster/operator-<cluster>.log).
	LogPath string
	// Args are extra manager flags.
	Args []string
	// WebhookScope is the registration's scope: registration.ScopeAll
	// (default) or registration.ScopeLabelled.
	WebhookScope string
	// Binary is the manager to run (default bin/manager, built if missing).
	Binary string
	// NoRegister starts one more replica next to a running one: the
	// webhook registration and its certificate are left as they are (the
	// API server keeps calling the first replica); this one serves the
	// same certificate on its own port.
	NoRegister bool
}

// CertDir is the directory of the local webhook's CA (ca.crt) and serving
// certificate for cluster c.
func CertDir(c *Cluster) string { return filepath.Join(Root(), "bin", "cluster", "certs-"+c.Name) }

// BuildManager builds the manager binary into bin/manager.
func BuildManager() (string, error) {
	bin := filepath.Join(Root(), "bin", "manager")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd")
	cmd.Dir = Root()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the manager: %w", err)
	}
	return bin, nil
}

// BuildPlugin builds kubectl-tdb into bin/kubectl-tdb.
func BuildPlugin() (string, error) {
	bin := filepath.Join(Root(), "bin", "kubectl-tdb")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kubectl-tdb")
	cmd.Dir = Root()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building kubectl-tdb: %w", err)
	}
	return bin, nil
}

// StartOperator registers the webhook for a local process (make run-local's
// first step) and starts the manager, waiting until it is ready.
func StartOperator(c *Cluster, o OperatorOptions) (*Operator, error) {
	if o.WebhookPort == 0 {
		o.WebhookPort = 9443
	}
	if o.MetricsPort == 0 {
		o.MetricsPort = 8080
	}
	if o.ProbePort == 0 {
		o.ProbePort = 8081
	}
	if o.LogPath == "" {
		o.LogPath = filepath.Join(Root(), "bin", "cluster", "operator-"+c.Name+".log")
	}
	certDir := CertDir(c)
	if !o.NoRegister {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = registration.Install(ctx, cfg, registration.Webhook{Host: "127.0.0.1", Port: o.WebhookPort, CertDir: certDir, OperatorNamespace: "tdb-system", Scope: o.WebhookScope})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("registering the local webhook: %w", err)
		}
	}
	bin := filepath.Join(Root(), "bin", "manager")
	if o.Binary != "" {
		bin = o.Binary
	} else if _, err := os.Stat(bin); err != nil {
		if bin, err = BuildManager(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	args := append([]string{
		// The certificate is registration.Install's, registered with a URL.
		"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", o.WebhookPort), "--webhook-cert-dir=" + certDir, "--cert-rotation=false",
		"--webhook-config-name=" + registration.Name,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", o.MetricsPort),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", o.ProbePort),
	}, o.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("starting the manager: %w", err)
	}
	op := &Operator{cmd: cmd, done: make(chan struct{}), LogPath: o.LogPath, probe: fmt.Sprintf("http://127.0.0.1:%d/readyz", o.ProbePort)}
	go func() { op.exitErr = cmd.Wait(); _ = logf.Close(); close(op.done) }()
	if err := op.waitReady(60 * time.Second); err != nil {
		op.Kill()
		return nil, err
	}
	// The webhook server itself must answer TLS before evictions rely on it.
	if err := waitTLS(fmt.Sprintf("127.0.0.1:%d", o.WebhookPort), 30*time.Second); err != nil {
		op.Kill()
		return nil, err
	}
	return op, nil
}

func (o *Operator) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-o.done:
			return fmt.Errorf("the manager exited (%w); see %s", o.exitErr, o.LogPath)
		default:
		}
		if ProbeOK(o.probe) == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the manager was not ready within %s; see %s", timeout, o.LogPath)
}

func waitTLS(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // readiness of a local server
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("webhook server %s not answering: %w", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ProbeOK asks a local HTTP endpoint such as a readiness probe: nil when
// it answers 200 OK.
func ProbeOK(url string) error {
	resp, err := http.Get(url) //nolint:noctx // a local probe
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// Pid is the manager's process ID.
func (o *Operator) Pid() int { return o.cmd.Process.Pid }

// Kill stops the manager with SIGKILL, as a crash would, and waits for it.
func (o *Operator) Kill() {
	_ = o.cmd.Process.Signal(syscall.SIGKILL)
	<-o.done
}

// Stop stops the manager with SIGTERM and waits for it.
func (o *Operator) Stop() {
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.done:
	case <-time.After(30 * time.Second):
		o.Kill()
	}
}

// RemoveWebhook removes the local webhook registration.
func RemoveWebhook(c *Cluster) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return registration.Remove(ctx, cfg)
}
