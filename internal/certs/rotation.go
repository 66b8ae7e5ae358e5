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

// Package certs gives the eviction webhook a serving certificate without
// cert-manager: the leader creates and rotates a CA and a serving
// certificate in a Secret of the operator's namespace and injects the CA into
// the ValidatingWebhookConfiguration (github.com/open-policy-agent/cert-controller),
// and every replica, leader or not, copies the Secret's key pair into its own
// certificate directory, which the webhook server watches.
//
// Copying the Secret in-process instead of mounting it as a volume matters
// twice: a new replica serves as soon as the Secret is populated, not a
// kubelet sync period later (up to a minute or two), and after a CA rotation
// every replica switches to the new chain within moments of the CA bundle
// changing, so the API server is not left rejecting the old certificate, which
// with failurePolicy Fail would refuse every eviction meanwhile.
package certs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The Secret and the ValidatingWebhookConfiguration the operator manages must
// already exist: config/ ships the Secret empty, and the rotator only ever
// updates the two objects. The Secret is read by name only, its lists and
// watches included (oneSecretManager); webhook configurations are read
// cluster-wide, because the rotator's informer lists them without a name
// selector and the status controller reads every configuration that holds
// the eviction webhook; writing is limited to the two names.
// +kubebuilder:rbac:groups="",namespace=tdb-system,resources=secrets,resourceNames=tdb-webhook-server-cert,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=tdb-validating-webhook-configuration,verbs=update

// Lifetimes of what the rotator issues. The serving certificate is renewed
// when less than RenewBefore of it is left (checked every CheckInterval and
// whenever the Secret changes); the CA likewise, which also reissues the
// serving certificate.
const (
	CAValidity      = 10 * 365 * 24 * time.Hour
	ServingValidity = 365 * 24 * time.Hour
	RenewBefore     = 90 * 24 * time.Hour
	CheckInterval   = 12 * time.Hour
)

// Options configure the operator's own certificate management.
type Options struct {
	// Namespace is the operator's namespace, where the Secret lives and the
	// webhook Service is.
	Namespace string
	// SecretName is the Secret holding ca.crt, ca.key, tls.crt and tls.key.
	SecretName string
	// ServiceName is the webhook Service; the serving certificate is valid
	// for its cluster DNS names.
	ServiceName string
	// WebhookConfigName is the ValidatingWebhookConfiguration whose
	// webhooks get the CA bundle.
	WebhookConfigName string
	// CertDir is where this replica writes tls.crt and tls.key for its
	// webhook server; it must be writable (an emptyDir in the Deployment).
	CertDir string
	// RequireLeaderElection lets only the leader create, rotate and inject;
	// every replica still copies the Secret into CertDir. Set it when the
	// manager runs with leader election.
	RequireLeaderElection bool
	// ControllerName names the rotator's controllers; managers in one
	// process (tests) need distinct names. Default "cert-rotator".
	ControllerName string
}

// DNSNames are the names the serving certificate is valid for: the ones the
// API server uses to call a webhook Service.
func (o Options) DNSNames() []string {
	base := fmt.Sprintf("%s.%s.svc", o.ServiceName, o.Namespace)
	return []string{base, base + ".cluster.local"}
}

func (o Options) validate() error {
	var missing []string
	for name, v := range map[string]string{
		"namespace": o.Namespace, "secret name": o.SecretName, "service name": o.ServiceName,
		"webhook configuration name": o.WebhookConfigName, "certificate directory": o.CertDir,
	} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("certificate rotation needs a %v", missing)
	}
	return nil
}

// Rotation is the operator's certificate management, set up on one manager.
type Rotation struct {
	opts Options
	// written is closed once this replica has written a key pair to CertDir.
	written chan struct{}
	// caInjected is closed by the rotator on the replica that rotates, once
	// its certificate files are in place and the CA bundle is injected.
	caInjected chan struct{}
	files      *fileSync
}

// New checks the options and prepares a Rotation; wrap the webhook server
// with GateServer before creating the manager, then call SetupWithManager.
func New(opts Options) (*Rotation, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.ControllerName == "" {
		opts.ControllerName = "cert-rotator"
	}
	r := &Rotation{opts: opts, written: make(chan struct{}), caInjected: make(chan struct{})}
	r.files = &fileSync{dir: opts.CertDir, written: r.written}
	return r, nil
}

// Written is closed once this replica's certificate directory holds a key
// pair from the Secret.
func (r *Rotation) Written() <-chan struct{} { return r.written }

// CAInjected is closed once the rotator of this replica has injected the CA
// bundle; it stays open on replicas that are not the leader.
func (r *Rotation) CAInjected() <-chan struct{} { return r.caInjected }

// GateServer returns srv, started only once this replica's certificate
// directory holds a key pair: until then the server does not listen, so the
// webhook server's StartedChecker, and with it readiness, fails, and the
// manager does not exit for want of a certificate file.
func (r *Rotation) GateServer(srv webhook.Server) webhook.Server {
	return &gatedServer{Server: srv, ready: r.written}
}

type gatedServer struct {
	webhook.Server
	ready <-chan struct{}
}

// Start waits for the certificate, then runs the server.
func (s *gatedServer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-certs")
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil
	}
	log.Info("serving certificate in place; starting the webhook server")
	return s.Server.Start(ctx)
}

// SetupWithManager adds the rotator and this replica's Secret-to-files
// copier to mgr.
func (r *Rotation) SetupWithManager(mgr ctrl.Manager) error {
	o := r.opts
	dns := o.DNSNames()
	cr := &rotator.CertRotator{
		SecretKey:              types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName},
		CertDir:                o.CertDir,
		CAName:                 "tdb-operator-ca",
		CAOrganization:         "tdb-operator",
		DNSName:                dns[0],
		ExtraDNSNames:          dns[1:],
		IsReady:                r.caInjected,
		Webhooks:               []rotator.WebhookInfo{{Name: o.WebhookConfigName, Type: rotator.Validating}},
		FieldOwner:             "tdb-operator",
		RequireLeaderElection:  o.RequireLeaderElection,
		CaCertDuration:         CAValidity,
		ServerCertDuration:     ServingValidity,
		LookaheadInterval:      RenewBefore,
		RotationCheckFrequency: CheckInterval,
		// Inject the CA only once this replica's own files are in place.
		EnableReadinessCheck: true,
		ControllerName:       o.ControllerName,
	}
	if err := rotator.AddRotator(newOneSecretManager(mgr, o.Namespace, o.SecretName), cr); err != nil {
		return fmt.Errorf("adding the certificate rotator: %w", err)
	}

	// Every replica watches the one Secret, in a cache of its own that runs
	// whether or not this replica leads.
	secrets, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{o.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", o.SecretName)},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the webhook Secret cache: %w", err)
	}
	if err := mgr.Add(everyReplicaCache{secrets}); err != nil {
		return fmt.Errorf("adding the webhook Secret cache: %w", err)
	}
	r.files.reader = secrets
	r.files.key = cr.SecretKey
	err = ctrl.NewControllerManagedBy(mgr).
		Named(o.ControllerName + "-files").
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		WatchesRawSource(source.Kind(secrets, &corev1.Secret{}, &handler.TypedEnqueueRequestForObject[*corev1.Secret]{})).
		Complete(r.files)
	if err != nil {
		return fmt.Errorf("adding the webhook certificate copier: %w", err)
	}
	return nil
}

// everyReplicaCache runs a cache on every replica: a cache added to a
// manager on its own would otherwise wait for leadership.
type everyReplicaCache struct{ cache.Cache }

func (everyReplicaCache) NeedLeaderElection() bool { return false }

// errNoKeyPair is returned while the Secret holds no usable key pair yet.
var errNoKeyPair = errors.New("the webhook Secret holds no valid key pair yet")
