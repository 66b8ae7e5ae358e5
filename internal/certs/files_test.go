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

package certs

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// keyPair returns a self-signed certificate and its key in PEM.
func keyPair(t *testing.T, cn string) (crt, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	return got
}

func TestWriteKeyPair(t *testing.T) {
	crtA, keyA := keyPair(t, "a")
	crtB, keyB := keyPair(t, "b")
	steps := []struct {
		name        string
		data        map[string][]byte
		wantErr     error
		wantChanged bool
		wantFiles   map[string]string
	}{
		{name: "empty Secret: nothing written", data: nil, wantErr: errNoKeyPair, wantFiles: map[string]string{}},
		{name: "certificate without key", data: map[string][]byte{CertFile: crtA}, wantErr: errNoKeyPair, wantFiles: map[string]string{}},
		{name: "key of another certificate", data: map[string][]byte{CertFile: crtA, KeyFile: keyB}, wantErr: errNoKeyPair, wantFiles: map[string]string{}},
		{
			name: "first key pair", data: map[string][]byte{CertFile: crtA, KeyFile: keyA, CAFile: crtA},
			wantChanged: true, wantFiles: map[string]string{CertFile: string(crtA), KeyFile: string(keyA), CAFile: string(crtA)},
		},
		{
			name: "same key pair again: no write", data: map[string][]byte{CertFile: crtA, KeyFile: keyA, CAFile: crtA},
			wantFiles: map[string]string{CertFile: string(crtA), KeyFile: string(keyA), CAFile: string(crtA)},
		},
		{
			name: "rotated key pair replaces the files", data: map[string][]byte{CertFile: crtB, KeyFile: keyB, CAFile: crtB},
			wantChanged: true, wantFiles: map[string]string{CertFile: string(crtB), KeyFile: string(keyB), CAFile: string(crtB)},
		},
		{
			name: "a broken Secret leaves the last good pair", data: map[string][]byte{CertFile: crtA, KeyFile: keyB},
			wantErr: errNoKeyPair, wantFiles: map[string]string{CertFile: string(crtB), KeyFile: string(keyB), CAFile: string(crtB)},
		},
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		changed, err := writeKeyPair(dir, s.data)
		if !errors.Is(err, s.wantErr) {
			t.Fatalf("%s: error %v, want %v", s.name, err, s.wantErr)
		}
		if changed != s.wantChanged {
			t.Errorf("%s: changed = %v, want %v", s.name, changed, s.wantChanged)
		}
		if diff := cmp.Diff(s.wantFiles, readDir(t, dir)); diff != "" {
			t.Errorf("%s: files (-want +got):\n%s", s.name, diff)
		}
	}
	info, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("the key is readable by others: mode %o", perm)
	}
}

func TestOptions(t *testing.T) {
	o := Options{Namespace: "tdb-system", SecretName: "s", ServiceName: "tdb-webhook-service", WebhookConfigName: "w", CertDir: "/certs"}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	want := []string{"tdb-webhook-service.tdb-system.svc", "tdb-webhook-service.tdb-system.svc.cluster.local"}
	if diff := cmp.Diff(want, o.DNSNames()); diff != "" {
		t.Errorf("DNS names (-want +got):\n%s", diff)
	}
	o.CertDir = ""
	if _, err := New(o); err == nil {
		t.Error("New accepted options without a certificate directory")
	}
}

// fakeServer records that it was started.
type fakeServer struct {
	webhook.Server
	started chan struct{}
}

func (s *fakeServer) Start(context.Context) error { close(s.started); return nil }
func (s *fakeServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error { return nil }
}

func TestGatedServerStartsOnceCertificatesAreWritten(t *testing.T) {
	r, err := New(Options{Namespace: "ns", SecretName: "s", ServiceName: "svc", WebhookConfigName: "w", CertDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	inner := &fakeServer{started: make(chan struct{})}
	srv := r.GateServer(inner)
	done := make(chan error, 1)
	go func() { done <- srv.Start(context.Background()) }()
	select {
	case <-inner.started:
		t.Fatal("the server started before a certificate was written")
	case <-time.After(50 * time.Millisecond):
	}
	close(r.written)
	select {
	case <-inner.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not start once the certificate was written")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Stopping before the certificate arrives returns without starting.
	r2, _ := New(Options{Namespace: "ns", SecretName: "s", ServiceName: "svc", WebhookConfigName: "w", CertDir: t.TempDir()})
	inner2 := &fakeServer{started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r2.GateServer(inner2).Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inner2.started:
		t.Fatal("the server started after the manager stopped")
	default:
	}
}
