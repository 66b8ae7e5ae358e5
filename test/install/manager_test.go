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

package install_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/gomega"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
)

// localManager is the manager run as a local process against the cluster,
// impersonating a user, and the address of its webhook server.
type localManager struct {
	*fixture.Manager
	webhookAddr string
}

// managerOption prepares a local manager's certificate directory before it
// starts and returns the flags that go with it.
type managerOption func(certDir string) []string

// withClientCA has the manager require client certificates signed by caPEM,
// which it finds at client-ca/ca.crt in its certificate directory, where a
// volume mounted inside the Deployment's certificate directory would put it.
func withClientCA(caPEM []byte) managerOption {
	return func(certDir string) []string {
		Expect(os.MkdirAll(filepath.Join(certDir, "client-ca"), 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(certDir, "client-ca", "ca.crt"), caPEM, 0o600)).To(Succeed())
		return []string{"--webhook-client-ca-name=client-ca/ca.crt"}
	}
}

// startManagerAs builds and starts the manager with the Deployment's
// operator flags (leader election, certificate rotation with config/default's
// names), on loopback ports, as user.
func startManagerAs(user string, opts ...managerOption) *localManager {
	dir, err := os.MkdirTemp("", "tdb-install-manager-")
	Expect(err).NotTo(HaveOccurred())
	webhookPort, probePort, metricsPort := fixture.FreePort(), fixture.FreePort(), fixture.FreePort()
	certDir := filepath.Join(dir, "certs")
	args := []string{"--leader-elect", "--leader-election-namespace=" + namespace, "--cert-rotation=true",
		"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", webhookPort), "--webhook-cert-dir=" + certDir,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probePort)}
	for _, opt := range opts {
		args = append(args, opt(certDir)...)
	}
	return &localManager{
		Manager: fixture.StartManager(cluster, fixture.ManagerOptions{User: user, Namespace: namespace, Dir: dir,
			Args: args, ProbeAddr: fmt.Sprintf("127.0.0.1:%d", probePort)}),
		webhookAddr: fmt.Sprintf("127.0.0.1:%d", webhookPort),
	}
}

func (m *localManager) servedCertificate() *x509.Certificate {
	conn, err := tls.Dial("tcp", m.webhookAddr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // compared with the Secret's
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0]
}

func pemOf(c *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

// post sends body to the webhook at path over TLS, verifying the served
// certificate against servingCA for serverName, and presenting clientCert
// when it is not nil; it returns the response body.
func (m *localManager) post(path string, body []byte, servingCA []byte, serverName string, clientCert *tls.Certificate) ([]byte, error) {
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(servingCA)).To(BeTrue())
	cfg := &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}
	if clientCert != nil {
		cfg.Certificates = []tls.Certificate{*clientCert}
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer c.CloseIdleConnections()
	resp, err := c.Post("https://"+m.webhookAddr+path, "application/json", bytes.NewReader(body)) //nolint:noctx // a local call
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var out bytes.Buffer
	if _, err := out.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return out.Bytes(), fmt.Errorf("%s: %s", resp.Status, out.String())
	}
	return out.Bytes(), nil
}

// testCA is a throw-away certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(name string) *testCA {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	cert, err := x509.ParseCertificate(der)
	Expect(err).NotTo(HaveOccurred())
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// clientCertificate issues a client certificate for the user name, as a
// kubeconfig for kube-apiserver's webhook calls would hold.
func (ca *testCA) clientCertificate(user string) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: user},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	Expect(err).NotTo(HaveOccurred())
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
