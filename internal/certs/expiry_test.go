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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// certExpiring returns a self-signed certificate in PEM that expires at
// notAfter (whole seconds).
func certExpiring(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "expiry"},
		NotBefore: notAfter.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestExpiryExporter(t *testing.T) {
	leaf := time.Unix(1900000000, 0)
	intermediate := time.Unix(1950000000, 0)
	oldCA, newCA := time.Unix(1800000000, 0), time.Unix(2100000000, 0)
	cases := []struct {
		name    string
		files   map[string][]byte
		want    string
		wantErr string
	}{{
		name: "the serving certificate's leaf and the latest CA of a bundle",
		files: map[string][]byte{
			CertFile: append(certExpiring(t, leaf), certExpiring(t, intermediate)...),
			CAFile:   append(certExpiring(t, oldCA), certExpiring(t, newCA)...),
		},
		want: `
tdb_webhook_certificate_expiry_timestamp_seconds{certificate="ca"} 2.1e+09
tdb_webhook_certificate_expiry_timestamp_seconds{certificate="serving"} 1.9e+09
`,
	}, {
		name:  "no ca.crt (a certificate directory without one) is no error",
		files: map[string][]byte{CertFile: certExpiring(t, leaf)},
		want: `
tdb_webhook_certificate_expiry_timestamp_seconds{certificate="serving"} 1.9e+09
`,
	}, {
		name:    "no certificate yet: no series, and the error says so",
		files:   map[string][]byte{},
		wantErr: "tls.crt: no such file",
	}, {
		name:    "a file without a certificate",
		files:   map[string][]byte{CertFile: []byte("not a certificate"), CAFile: certExpiring(t, newCA)},
		want:    "\ntdb_webhook_certificate_expiry_timestamp_seconds{certificate=\"ca\"} 2.1e+09\n",
		wantErr: "holds no certificate",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			operatormetrics.WebhookCertificateExpiry.Reset()
			// A series left from an earlier read goes once its file does.
			operatormetrics.WebhookCertificateExpiry.WithLabelValues("serving").Set(1)
			operatormetrics.WebhookCertificateExpiry.WithLabelValues("ca").Set(1)
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := (&ExpiryExporter{Dir: dir}).Export()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Export() error = %v, want one containing %q", err, tc.wantErr)
			}
			const header = `
# HELP tdb_webhook_certificate_expiry_timestamp_seconds Unix time at which the eviction webhook's certificate expires (notAfter), as this replica reads it from its certificate directory: certificate serving (tls.crt) or ca (ca.crt).
# TYPE tdb_webhook_certificate_expiry_timestamp_seconds gauge`
			want := ""
			if tc.want != "" {
				want = header + tc.want
			}
			if err := testutil.CollectAndCompare(operatormetrics.WebhookCertificateExpiry, strings.NewReader(want)); err != nil {
				t.Error(err)
			}
		})
	}
	if diff := cmp.Diff(false, (&ExpiryExporter{}).NeedLeaderElection()); diff != "" {
		t.Errorf("NeedLeaderElection (-want +got):\n%s", diff)
	}
}
