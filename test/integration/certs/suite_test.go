//go:build integration

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

// Package certs_test checks the operator's own webhook certificate
// management against a real kube-apiserver (envtest): the Secret filled and
// the CA injected into the webhook configuration, the certificate valid for
// the Service's DNS names, every replica serving it whether it leads or not,
// a second instance reusing it, and rotations of the serving certificate and
// of the CA reaching every replica.
package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/tdb-operator/tdb-operator/internal/certs"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// The names config/default installs, as the Deployment passes them.
const (
	namespace        = "tdb-system"
	secretName       = "tdb-webhook-server-cert"
	serviceName      = "tdb-webhook-service"
	webhookConfig    = "tdb-validating-webhook-configuration"
	leaderElectionID = "tdb-operator.policy.tdb.dev"
)

var (
	env *envtest.Environment
	cfg *rest.Config
	k8s client.Client
	ctx = context.Background()
)

func TestCerts(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Webhook certificates made and rotated by the operator (envtest)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, cfg, err = framework.StartAPIServer()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: framework.Scheme})
	Expect(err).NotTo(HaveOccurred())

	// What config/default installs before the operator starts: its
	// namespace, the empty Secret and the webhook configuration.
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace}})).To(Succeed())
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "webhook", "manifests.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	Expect(yaml.Unmarshal(raw, &vwc)).To(Succeed())
	vwc.Name = webhookConfig
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].ClientConfig.Service.Name = serviceName
		vwc.Webhooks[i].ClientConfig.Service.Namespace = namespace
	}
	Expect(k8s.Create(ctx, &vwc)).To(Succeed())

	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// replica is one operator manager wired as cmd/main.go wires it with
// --cert-rotation: a webhook server gated on the certificate, readiness on
// the server having started, the rotation on the manager.
type replica struct {
	name                 string
	webhookAddr, readyz  string
	rotation             *certs.Rotation
	cancel               context.CancelFunc
	done                 chan error
	leaderElect, stopped bool
	tmp                  string
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// startReplica starts a manager; stop it with stop. With leaderElect it takes part in leader
// election for the suite's Lease (and rotates only when it leads); without,
// it rotates as a single replica does.
func startReplica(name string, leaderElect bool) *replica {
	webhookPort, probePort := freePort(), freePort()
	// Not GinkgoT().TempDir(): that is removed when the spec ends, and a
	// replica lives through several.
	tmp, err := os.MkdirTemp("", "tdb-certs-"+name+"-")
	Expect(err).NotTo(HaveOccurred())
	certDir := filepath.Join(tmp, "serving-certs")
	rotation, err := certs.New(certs.Options{
		Namespace: namespace, SecretName: secretName, ServiceName: serviceName, WebhookConfigName: webhookConfig,
		CertDir: certDir, RequireLeaderElection: leaderElect, ControllerName: "cert-rotator-" + name,
	})
	Expect(err).NotTo(HaveOccurred())
	srv := rotation.GateServer(webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhookPort, CertDir: certDir}))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  framework.Scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  fmt.Sprintf("127.0.0.1:%d", probePort),
		LeaderElection:          leaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: namespace,
		WebhookServer:           srv,
	})
	Expect(err).NotTo(HaveOccurred())
	mgr.GetWebhookServer().Register("/validate-eviction", http.NotFoundHandler())
	Expect(mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker())).To(Succeed())
	Expect(rotation.SetupWithManager(mgr)).To(Succeed())
	mctx, cancel := context.WithCancel(ctx)
	r := &replica{
		name: name, webhookAddr: fmt.Sprintf("127.0.0.1:%d", webhookPort), readyz: fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort),
		rotation: rotation, cancel: cancel, done: make(chan error, 1), leaderElect: leaderElect, tmp: tmp,
	}
	go func() { r.done <- mgr.Start(mctx) }()
	return r
}

func (r *replica) stop() {
	if r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	Eventually(r.done).Should(Receive(BeNil()), "replica %s did not stop cleanly", r.name)
	Expect(os.RemoveAll(r.tmp)).To(Succeed())
}

// ready reports whether the replica's /readyz answers 200.
func (r *replica) ready() error {
	resp, err := http.Get(r.readyz) //nolint:noctx // a local probe
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	return nil
}

// servedCertificate is the certificate the replica's webhook server presents.
func (r *replica) servedCertificate() (*x509.Certificate, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", r.webhookAddr,
		&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the chain is verified below, against the injected CA
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0], nil
}

func secretData() map[string][]byte {
	var s corev1.Secret
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, &s)).To(Succeed())
	return s.Data
}

func secret() *corev1.Secret {
	var s corev1.Secret
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, &s)).To(Succeed())
	return &s
}

// injectedCA is the CA bundle of the webhook configuration's webhook.
func injectedCA() []byte {
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	Expect(k8s.Get(ctx, client.ObjectKey{Name: webhookConfig}, &vwc)).To(Succeed())
	Expect(vwc.Webhooks).To(HaveLen(1))
	return vwc.Webhooks[0].ClientConfig.CABundle
}

func parseCert(pemBytes []byte) *x509.Certificate {
	block, _ := pem.Decode(pemBytes)
	Expect(block).NotTo(BeNil(), "not PEM")
	c, err := x509.ParseCertificate(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// verifyForService checks cert against the CA bundle for each DNS name the
// API server may use to call the webhook Service.
func verifyForService(cert *x509.Certificate, caBundle []byte) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle) {
		return errors.New("the CA bundle holds no certificate")
	}
	for _, name := range []string{serviceName + "." + namespace + ".svc", serviceName + "." + namespace + ".svc.cluster.local"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			return fmt.Errorf("for %s: %w", name, err)
		}
	}
	return nil
}

// holdLease makes someone else the leader, for as long as the suite runs.
func holdLease() {
	now := metav1.NewMicroTime(time.Now())
	Expect(k8s.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaderElectionID, Namespace: namespace},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("someone-else"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now,
		},
	})).To(Succeed())
}

func leaseHolder() string {
	var l coordinationv1.Lease
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: leaderElectionID}, &l)).To(Succeed())
	return ptr.Deref(l.Spec.HolderIdentity, "")
}
