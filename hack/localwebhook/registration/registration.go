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

// Package registration prepares a cluster for an operator that serves its
// webhook from a process outside the cluster: the CRDs are installed, a CA
// and serving certificate written, and the webhook registered by URL. make
// run-local (hack/localwebhook) uses it, and so does the local-cluster
// harness (test/kwokenv) for the demo, the e2e suites and the benches.
package registration

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Name is the ValidatingWebhookConfiguration of a local run (the manager's
// --webhook-config-name).
const Name = "tdb-operator-local"

// Webhook scopes: which namespaces send their evictions to the webhook.
const (
	// ScopeAll: every namespace but the operator's (the default).
	ScopeAll = "all"
	// ScopeLabelled: only namespaces labelled policy.tdb.dev/enforce=true.
	ScopeLabelled = "labelled"
)

// Webhook says where a local process serves the webhook.
type Webhook struct {
	// Host is the address the API server reaches the process at (an IP or
	// a DNS name).
	Host string
	// Port is the webhook server's port.
	Port int
	// CertDir receives tls.crt, tls.key and ca.crt.
	CertDir string
	// OperatorNamespace is exempt from the webhook.
	OperatorNamespace string
	// Scope is ScopeAll ("" too) or ScopeLabelled.
	Scope string
}

// Install installs the CRDs of config/crd/bases, writes a fresh CA and
// serving certificate to w.CertDir, and registers the webhook of
// config/webhook/manifests.yaml at w's address.
func Install(ctx context.Context, cfg *rest.Config, w Webhook) error {
	c, err := localClient(cfg)
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, c); err != nil {
		return err
	}
	caPEM, err := writeCerts(w.CertDir, w.Host)
	if err != nil {
		return err
	}
	if w.Scope != "" && w.Scope != ScopeAll && w.Scope != ScopeLabelled {
		return fmt.Errorf("unknown webhook scope %q: use %s or %s", w.Scope, ScopeAll, ScopeLabelled)
	}
	return register(ctx, c, w, caPEM)
}

// Remove removes the local webhook registration: evictions stop waiting for
// a local process.
func Remove(ctx context.Context, cfg *rest.Config) error {
	c, err := localClient(cfg)
	if err != nil {
		return err
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: Name}}
	if err := client.IgnoreNotFound(c.Delete(ctx, vwc)); err != nil {
		return fmt.Errorf("removing the webhook registration: %w", err)
	}
	return nil
}

// repoRoot is the repository root, found from this file's location: the
// CRDs and the webhook configuration are read from config/.
func repoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

func localClient(cfg *rest.Config) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// installCRDs applies config/crd/bases and waits until they are served.
func installCRDs(ctx context.Context, c client.Client) error {
	files, err := filepath.Glob(filepath.Join(repoRoot(), "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs under %s", filepath.Join(repoRoot(), "config", "crd", "bases"))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
			return fmt.Errorf("parsing %s: %w", f, err)
		}
		if err := upsert(ctx, c, &crd, func(existing client.Object) { existing.(*apiextensionsv1.CustomResourceDefinition).Spec = crd.Spec }); err != nil {
			return fmt.Errorf("installing CRD %s: %w", crd.Name, err)
		}
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, &got); err != nil {
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.Name, err)
		}
	}
	return nil
}

// register creates or updates the local webhook registration from
// config/webhook/manifests.yaml, pointed at the local server.
func register(ctx context.Context, c client.Client, lw Webhook, caPEM []byte) error {
	host, port, operatorNS := lw.Host, lw.Port, lw.OperatorNamespace
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "config", "webhook", "manifests.yaml"))
	if err != nil {
		return err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(raw, &vwc); err != nil {
		return fmt.Errorf("parsing the webhook configuration: %w", err)
	}
	vwc.Name = Name
	for i := range vwc.Webhooks {
		w := &vwc.Webhooks[i]
		url := fmt.Sprintf("https://%s%s", net.JoinHostPort(host, fmt.Sprint(port)), *w.ClientConfig.Service.Path)
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
		w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{operatorNS},
		}}}
		if lw.Scope == ScopeLabelled {
			w.NamespaceSelector.MatchLabels = map[string]string{"policy.tdb.dev/enforce": "true"}
		}
	}
	return upsert(ctx, c, &vwc, func(existing client.Object) {
		existing.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks = vwc.Webhooks
	})
}

func upsert(ctx context.Context, c client.Client, obj client.Object, update func(existing client.Object)) error {
	err := c.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return err
	}
	update(existing)
	return c.Update(ctx, existing)
}

// writeCerts writes a fresh CA and a serving certificate for host, valid for
// a year, and returns the CA in PEM.
func writeCerts(dir, host string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tdb-operator local CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := map[string][]byte{
		"ca.crt":  caPEM,
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	return bytes.Clone(caPEM), nil
}
