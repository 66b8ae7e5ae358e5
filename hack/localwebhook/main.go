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
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tdb-operator/tdb-operator/hack/localwebhook/registration"
	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "localwebhook:", err)
		os.Exit(1)
	}
}

func run() error {
	w := registration.Webhook{}
	var remove bool
	flag.StringVar(&w.Host, "host", "127.0.0.1", "Address the API server reaches the local webhook at (an IP or a DNS name).")
	flag.IntVar(&w.Port, "port", 9443, "Port of the local webhook server.")
	flag.StringVar(&w.CertDir, "cert-dir", "bin/local-webhook-certs", "Directory to write tls.crt, tls.key and ca.crt to.")
	flag.StringVar(&w.OperatorNamespace, "operator-namespace", "tdb-system", "Namespace exempt from the webhook (the operator's own).")
	flag.StringVar(&w.Scope, "scope", registration.ScopeAll, "Which namespaces send their evictions to the webhook: all (every namespace but the operator's) or labelled (only namespaces labelled policy.tdb.dev/enforce=true).")
	flag.BoolVar(&remove, "remove", false, "Remove the local webhook registration instead of creating it.")
	flag.Parse()

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig (set KUBECONFIG): %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if remove {
		if err := registration.Remove(ctx, cfg); err != nil {
			return err
		}
		fmt.Println("local webhook registration removed")
		return nil
	}
	if err := registration.Install(ctx, cfg, w); err != nil {
		return err
	}
	fmt.Printf("CRDs installed; webhook registered at https://%s%s with the CA in %s\n",
		net.JoinHostPort(w.Host, fmt.Sprint(w.Port)), evictionwebhook.Path, w.CertDir)
	return nil
}
