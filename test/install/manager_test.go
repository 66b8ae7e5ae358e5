//go:build e2e

package install_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// localManager is the manager binary run as a local process against the
// cluster, impersonating a user.
type localManager struct {
	cmd                 *exec.Cmd
	done                chan struct{}
	readyz, webhookAddr string
	logPath             string
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// startManagerAs builds and starts the manager with the Deployment's
// operator flags (leader election, certificate rotation with config/default's
// names), on loopback ports, as user.
func startManagerAs(user string) *localManager {
	bin, err := kwokenv.BuildManager()
	Expect(err).NotTo(HaveOccurred())
	dir, err := os.MkdirTemp("", "tdb-install-manager-")
	Expect(err).NotTo(HaveOccurred())

	kubeconfig, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, a := range kubeconfig.AuthInfos {
		a.Impersonate = user
		a.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	}
	impersonating := filepath.Join(dir, "kubeconfig")
	Expect(clientcmd.WriteToFile(*kubeconfig, impersonating)).To(Succeed())

	webhookPort, probePort, metricsPort := freePort(), freePort(), freePort()
	m := &localManager{
		done:        make(chan struct{}),
		readyz:      fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort),
		webhookAddr: fmt.Sprintf("127.0.0.1:%d", webhookPort),
		logPath:     filepath.Join(kwokenv.Root(), "bin", "cluster", "operator-"+clusterName+".log"),
	}
	logf, err := os.Create(m.logPath)
	Expect(err).NotTo(HaveOccurred())
	m.cmd = exec.Command(bin, "--leader-elect", "--leader-election-namespace="+namespace, "--cert-rotation=true",
		"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", webhookPort), "--webhook-cert-dir="+filepath.Join(dir, "certs"),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probePort))
	m.cmd.Env = append(os.Environ(), "KUBECONFIG="+impersonating, "POD_NAMESPACE="+namespace)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	Expect(m.cmd.Start()).To(Succeed())
	go func() { _ = m.cmd.Wait(); _ = logf.Close(); _ = os.RemoveAll(dir); close(m.done) }()
	return m
}

func (m *localManager) ready() error {
	select {
	case <-m.done:
		return fmt.Errorf("the manager exited; see %s", m.logPath)
	default:
	}
	resp, err := http.Get(m.readyz) //nolint:noctx // a local probe
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	return nil
}

func (m *localManager) servedCertificate() *x509.Certificate {
	conn, err := tls.Dial("tcp", m.webhookAddr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // compared with the Secret's
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0]
}

func (m *localManager) stop() {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

func pemOf(c *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}
