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

// Command localwebhook prepares a cluster for an operator running as a local
// process (make run-local): it installs the CRDs, writes a self-signed CA and
// a serving certificate for the webhook host, and registers the eviction
// webhook with clientConfig.url pointing at that host and port, with that CA.
// With -remove it deletes the registration again, so that evictions no
// longer wait for a local process that is gone.
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
)

// registrationName is the ValidatingWebhookConfiguration of a local run.
const registrationName = "tdb-operator-local"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "localwebhook:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		host, certDir, operatorNS string
		port                      int
		remove                    bool
	)
	flag.StringVar(&host, "host", "127.0.0.1", "Address the API server reaches the local webhook at (an IP or a DNS name).")
	flag.IntVar(&port, "port", 9443, "Port of the local webhook server.")
	flag.StringVar(&certDir, "cert-dir", "bin/local-webhook-certs", "Directory to write tls.crt, tls.key and ca.crt to.")
	flag.StringVar(&operatorNS, "operator-namespace", "tdb-system", "Namespace exempt from the webhook (the operator's own).")
	flag.BoolVar(&remove, "remove", false, "Remove the local webhook registration instead of creating it.")
	flag.Parse()

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig (set KUBECONFIG): %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if remove {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: registrationName}}
		if err := client.IgnoreNotFound(c.Delete(ctx, vwc)); err != nil {
			return fmt.Errorf("removing the webhook registration: %w", err)
		}
		fmt.Println("local webhook registration removed")
		return nil
	}

	if err := installCRDs(ctx, c); err != nil {
		return err
	}
	caPEM, err := writeCerts(certDir, host)
	if err != nil {
		return err
	}
	if err := register(ctx, c, host, port, operatorNS, caPEM); err != nil {
		return err
	}
	fmt.Printf("CRDs installed; webhook registered at https://%s%s with the CA in %s\n",
		net.JoinHostPort(host, fmt.Sprint(port)), evictionwebhook.Path, certDir)
	return nil
}

// installCRDs applies config/crd/bases and waits until they are served.
func installCRDs(ctx context.Context, c client.Client) error {
	files, err := filepath.Glob(filepath.Join("config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs under config/crd/bases (run from the repository root)")
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
func register(ctx context.Context, c client.Client, host string, port int, operatorNS string, caPEM []byte) error {
	raw, err := os.ReadFile(filepath.Join("config", "webhook", "manifests.yaml"))
	if err != nil {
		return err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(raw, &vwc); err != nil {
		return fmt.Errorf("parsing the webhook configuration: %w", err)
	}
	vwc.Name = registrationName
	for i := range vwc.Webhooks {
		w := &vwc.Webhooks[i]
		url := fmt.Sprintf("https://%s%s", net.JoinHostPort(host, fmt.Sprint(port)), *w.ClientConfig.Service.Path)
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
		w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{operatorNS},
		}}}
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
