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
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// DefaultExpiryInterval is how often ExpiryExporter reads the certificates.
const DefaultExpiryInterval = time.Minute

// ExpiryExporter exports when the certificates this replica's webhook
// server serves expire (tdb_webhook_certificate_expiry_timestamp_seconds):
// the serving certificate (tls.crt) and the CA (ca.crt) in the certificate
// directory. It reads the files rather than the Secret, so it reports
// whatever put them there: the operator's own rotation, a mounted
// cert-manager Secret, OLM or make run-local. It runs on every replica.
type ExpiryExporter struct {
	// Dir is the webhook server's certificate directory.
	Dir string
	// Interval between reads; DefaultExpiryInterval when zero.
	Interval time.Duration
}

// Start exports at once, then every Interval until ctx ends.
func (e *ExpiryExporter) Start(ctx context.Context) error {
	interval := e.Interval
	if interval <= 0 {
		interval = DefaultExpiryInterval
	}
	log := ctrl.LoggerFrom(ctx).WithName("webhook-cert-expiry")
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		if err := e.Export(); err != nil {
			log.V(1).Info("cannot read a webhook certificate", "dir", e.Dir, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// NeedLeaderElection is false: every replica serves its own certificate.
func (*ExpiryExporter) NeedLeaderElection() bool { return false }

// Export reads the certificates once. A file that is missing or holds no
// certificate has no series; the errors of the files that could not be read
// are returned (a missing ca.crt is not one).
func (e *ExpiryExporter) Export() error {
	var errs []error
	for _, f := range []struct {
		label, file string
		// latest: a bundle is as good as its longest-lived certificate
		// (a CA bundle during a rotation holds the old and the new CA);
		// otherwise the first certificate, the leaf, counts.
		latest, optional bool
	}{
		{label: "serving", file: CertFile},
		{label: "ca", file: CAFile, latest: true, optional: true},
	} {
		notAfter, err := readNotAfter(filepath.Join(e.Dir, f.file), f.latest)
		if err != nil {
			operatormetrics.WebhookCertificateExpiry.DeleteLabelValues(f.label)
			if !f.optional || !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		operatormetrics.WebhookCertificateExpiry.WithLabelValues(f.label).Set(float64(notAfter.Unix()))
	}
	return errors.Join(errs...)
}

// readNotAfter returns the notAfter of the first certificate of a PEM file,
// or with latest the latest notAfter of all of them.
func readNotAfter(path string, latest bool) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	var notAfter time.Time
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return time.Time{}, fmt.Errorf("parsing %s: %w", path, err)
		}
		if !latest {
			return cert.NotAfter, nil
		}
		if cert.NotAfter.After(notAfter) {
			notAfter = cert.NotAfter
		}
	}
	if notAfter.IsZero() {
		return time.Time{}, fmt.Errorf("%s holds no certificate", path)
	}
	return notAfter, nil
}
