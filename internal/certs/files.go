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
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// File names in the certificate directory, as the webhook server reads them
// (and as the Secret holds them).
const (
	CertFile = corev1.TLSCertKey
	KeyFile  = corev1.TLSPrivateKeyKey
	CAFile   = "ca.crt"
)

// fileSync copies the Secret's key pair into this replica's certificate
// directory whenever the Secret changes.
type fileSync struct {
	reader  client.Reader
	key     types.NamespacedName
	dir     string
	written chan struct{}
	once    sync.Once
}

// Reconcile copies the Secret's key pair to the directory.
func (f *fileSync) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.NamespacedName != f.key {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	var secret corev1.Secret
	if err := f.reader.Get(ctx, f.key, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("the webhook Secret does not exist; it is part of the install (config/default)", "secret", f.key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading the webhook Secret: %w", err)
	}
	changed, err := writeKeyPair(f.dir, secret.Data)
	if errors.Is(err, errNoKeyPair) {
		// The rotator on the leader fills it; its update brings us back.
		log.Info("waiting for the webhook Secret to be populated", "secret", f.key)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if changed {
		log.Info("webhook serving certificate written", "secret", f.key, "dir", f.dir)
	}
	f.once.Do(func() { close(f.written) })
	return ctrl.Result{}, nil
}

// writeKeyPair writes tls.key, tls.crt and ca.crt from data to dir when
// data holds a matching key pair, and reports whether a file changed. Each
// file is replaced by a rename, so a reader never sees half a file; the key
// goes first so that the certificate's change, which the server's watcher
// reloads on, comes last.
func writeKeyPair(dir string, data map[string][]byte) (bool, error) {
	crt, key := data[CertFile], data[KeyFile]
	if len(crt) == 0 || len(key) == 0 {
		return false, errNoKeyPair
	}
	if _, err := tls.X509KeyPair(crt, key); err != nil {
		return false, fmt.Errorf("%w: %w", errNoKeyPair, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("creating the certificate directory: %w", err)
	}
	changed := false
	for _, file := range []struct {
		name string
		data []byte
	}{{KeyFile, key}, {CAFile, data[CAFile]}, {CertFile, crt}} {
		if file.data == nil {
			continue
		}
		c, err := replaceFile(filepath.Join(dir, file.name), file.data)
		if err != nil {
			return changed, err
		}
		changed = changed || c
	}
	return changed, nil
}

func replaceFile(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("replacing %s: %w", path, err)
	}
	return true, nil
}
