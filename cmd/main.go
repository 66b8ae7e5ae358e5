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

// Command manager runs tdb-operator: the TopologyDisruptionBudget
// controllers (status, rollouts, deletion cost), which need leadership with
// --leader-elect, and the eviction webhook, which every replica serves.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/controllers"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/certs"
	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
	"github.com/tdb-operator/tdb-operator/internal/replica"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
)

// Leader election (--leader-elect) needs its Lease in the operator's
// namespace (creating cannot be limited to one name; reading and renewing
// can) and records events.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=tdb-system,resources=leases,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=tdb-system,resources=leases,resourceNames=tdb-operator.policy.tdb.dev,verbs=get;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// leaderElectionID names the leader election Lease (the RBAC marker above
// names it too).
const leaderElectionID = "tdb-operator.policy.tdb.dev"

// maxStatusWorkers bounds --status-workers: each worker may hold a status
// write to the API server, and 8 live reads (all of them together at most
// 128: controllers.liveReads).
const maxStatusWorkers = 256

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// options are the manager's command line.
type options struct {
	metricsAddr    string
	probeAddr      string
	leaderElect    bool
	leaderElectNS  string
	recordTimeout  time.Duration
	reopenDelay    time.Duration
	webhookPort    int
	webhookCertDir string
	webhookHost    string
	clientCAName   string
	callerNS       string
	callers        evictionwebhook.CallerPolicy
	enableWebhook  bool
	certRotation   bool
	shutdownDelay  time.Duration
	certOptions    certs.Options
	operatorNS     string
	zap            zap.Options
	pprofAddr      string
	apiQPS         float64
	apiBurst       int
	statusWorkers  int
}

// parseFlags reads and checks the command line.
func parseFlags() (*options, error) {
	f := &options{zap: zap.Options{Development: false}}
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "Elect a leader among replicas for the controllers (the webhook is served by every replica).")
	flag.StringVar(&f.leaderElectNS, "leader-election-namespace", "", "Namespace of the leader election Lease; default: the namespace the manager runs in.")
	flag.DurationVar(&f.recordTimeout, "record-timeout", budget.DefaultRecordTimeout, fmt.Sprintf("How long, from when the operator first sees it, an eviction record protects a pod that keeps running without being deleted; then the pod is read live and, still running and not deleting, the record is taken for an eviction that never happened and dropped. At least %s.", budget.MinRecordTimeout))
	flag.DurationVar(&f.reopenDelay, "reopen-write-delay", 0, "Deprecated, no effect: the status controller no longer holds any status write (the written status is the truth within the status lag). Accepted so that existing manifests keep working; a warning is logged when set.")
	flag.BoolVar(&f.enableWebhook, "enable-webhook", true, "Serve the pods/eviction admission webhook.")
	flag.StringVar(&f.webhookHost, "webhook-host", "", "Address the webhook server binds to; empty means all interfaces.")
	flag.IntVar(&f.webhookPort, "webhook-port", 9443, "Port of the webhook server (TLS).")
	flag.StringVar(&f.clientCAName, "webhook-client-ca-name", "", "File in --webhook-cert-dir (a name, or a relative path such as client-ca/ca.crt) holding the PEM CA certificate(s) that sign the API server's client certificate for webhooks. Set, the webhook server refuses every connection that does not present a certificate signed by them, so a pod that can reach the webhook port cannot forge an admission request; read once at start. Empty (the default): callers are not authenticated. With --cert-rotation it must not be tls.crt, tls.key or ca.crt, which the operator writes there. See docs/install.md.")
	flag.StringVar(&f.callerNS, "webhook-caller-namespaces", "kube-system", "Comma-separated namespaces whose pods may call the webhook (proxies that relay the API server's calls, such as konnectivity agents). An admission review whose connection comes from the address of a pod in any other namespace is refused with 403 and charges nothing: the API server never runs as an ordinary pod of its own cluster. \"*\" lets any pod call. See docs/install.md.")
	flag.StringVar(&f.webhookCertDir, "webhook-cert-dir", "", "Directory holding tls.crt and tls.key for the webhook server (written there by the operator with --cert-rotation); default: <temp dir>/k8s-webhook-server/serving-certs.")
	flag.DurationVar(&f.shutdownDelay, "shutdown-delay", defaultShutdownDelay(), "On SIGTERM, report not ready and keep answering webhook calls this long before stopping, so the Service stops routing evictions here first (a failed call would abort a kubectl drain). Default: 5s in a cluster, 0 otherwise.")
	flag.BoolVar(&f.certRotation, "cert-rotation", inCluster(), "Create and rotate the webhook's serving certificate in a Secret and inject its CA into the webhook configuration (no cert-manager needed); every replica copies it into --webhook-cert-dir. Default: true when running in a cluster. Off: the certificate is read from --webhook-cert-dir as it is (cert-manager, make run-local).")
	flag.StringVar(&f.certOptions.SecretName, "webhook-secret-name", "tdb-webhook-server-cert", "With --cert-rotation: the Secret in the operator's namespace that holds the CA and the serving certificate.")
	flag.StringVar(&f.certOptions.ServiceName, "webhook-service-name", "tdb-webhook-service", "With --cert-rotation: the webhook Service in the operator's namespace; the certificate is valid for its DNS names.")
	flag.StringVar(&f.certOptions.WebhookConfigName, "webhook-config-name", "tdb-validating-webhook-configuration", "The ValidatingWebhookConfiguration of the eviction webhook: with --cert-rotation it gets the CA bundle; its namespaceSelector tells which namespaces' budgets are enforced (a budget elsewhere reports DisruptionAllowed=False, reason NotEnforced). make run-local registers tdb-operator-local.")
	flag.StringVar(&f.operatorNS, "operator-namespace", envOr("POD_NAMESPACE", "tdb-system"), "The operator's own namespace; evictions there always pass, so draining the operator's node cannot deadlock. Default: $POD_NAMESPACE, else tdb-system.")
	flag.StringVar(&f.pprofAddr, "pprof-bind-address", "", "Address Go's pprof handlers (/debug/pprof/) bind to, e.g. 127.0.0.1:8082, for CPU and heap profiles; empty (the default) disables them. They are unauthenticated: bind them to localhost and reach them with kubectl port-forward.")
	flag.Float64Var(&f.apiQPS, "kube-api-qps", -1, "Requests per second the manager's clients may send the API server on average (client-go's client-side limit, one bucket per client and resource type); negative (the default, as controller-runtime's): no client-side limit, the API server's priority and fairness decides. See docs/scale.md.")
	flag.IntVar(&f.apiBurst, "kube-api-burst", 100, "With a positive --kube-api-qps: the requests the manager's clients may send in a burst above it.")
	flag.IntVar(&f.statusWorkers, "status-workers", controllers.DefaultStatusWorkers, fmt.Sprintf("How many budgets the status controller computes and writes at once. Its passes wait on the API server, not the CPU: under a large drain too few keep budgets' statuses (and the reopens they show) seconds behind their pods. Between 1 and %d. See docs/scale.md.", maxStatusWorkers))
	f.zap.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))

	if f.recordTimeout < budget.MinRecordTimeout {
		return nil, fmt.Errorf("--record-timeout must be at least %s (core deletes an evicted pod within about 10 s of admitting the eviction), got %s", budget.MinRecordTimeout, f.recordTimeout)
	}
	if f.statusWorkers < 1 || f.statusWorkers > maxStatusWorkers {
		return nil, fmt.Errorf("--status-workers must be between 1 and %d, got %d", maxStatusWorkers, f.statusWorkers)
	}
	if f.apiQPS == 0 || (f.apiQPS > 0 && f.apiBurst <= 0) {
		return nil, fmt.Errorf("--kube-api-qps=%v, --kube-api-burst=%d: want a negative QPS (no client-side limit) or a positive QPS and burst", f.apiQPS, f.apiBurst)
	}
	if f.reopenDelay != 0 {
		ctrl.Log.Info("--reopen-write-delay is deprecated and has no effect: no status write is held", "reopen-write-delay", f.reopenDelay.String())
	}
	if err := checkClientCAName(f.clientCAName, f.certRotation); err != nil {
		return nil, err
	}
	callers, err := evictionwebhook.ParseCallerNamespaces(f.callerNS)
	if err != nil {
		return nil, fmt.Errorf("--webhook-caller-namespaces: %w", err)
	}
	f.callers = callers
	if f.webhookCertDir == "" {
		// controller-runtime's default, named here because the rotation
		// writes to it.
		f.webhookCertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	return f, nil
}

func run() error {
	f, err := parseFlags()
	if err != nil {
		return err
	}
	mgr, rotation, err := newManager(f)
	if err != nil {
		return err
	}
	var draining atomic.Bool
	ctx := drainingSignalHandler(&draining, f.shutdownDelay)
	// One memory for the controllers and the webhook: the last labels of
	// gone nodes, the budget versions every status writer starts from,
	// what the status controller knows that the statuses do not show yet,
	// and one gathering layer (see internal/replica).
	mem, err := replica.ForManager(ctx, mgr)
	if err != nil {
		return err
	}
	if err := controllers.SetupAll(mgr, controllers.Options{RecordTimeout: f.recordTimeout, OperatorNamespace: f.operatorNS,
		WebhookConfigName: f.certOptions.WebhookConfigName, Memory: mem, StatusWorkers: f.statusWorkers}); err != nil {
		return err
	}
	if f.enableWebhook {
		if _, err := evictionwebhook.Register(mgr, evictionwebhook.Options{ExemptNamespace: f.operatorNS, Callers: f.callers,
			RecordTimeout: f.recordTimeout, Memory: mem}); err != nil {
			return err
		}
		// Every replica reports when the certificate it serves expires,
		// whoever put it in the directory.
		if err := mgr.Add(&certs.ExpiryExporter{Dir: f.webhookCertDir}); err != nil {
			return fmt.Errorf("adding the webhook certificate expiry exporter: %w", err)
		}
	}
	if rotation != nil {
		if err := rotation.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	if err := startWebhookInformers(ctx, mgr); err != nil {
		return err
	}
	if err := addChecks(mgr, &draining, f.enableWebhook); err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("starting manager")
	return mgr.Start(ctx)
}

// newManager makes the manager, its webhook server gated on the rotated
// certificate when the operator rotates it.
func newManager(f *options) (ctrl.Manager, *certs.Rotation, error) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))
	// With ClientCAName set, controller-runtime reads the CA from CertDir
	// when the server starts and requires and verifies client certificates.
	webhookServer := webhook.NewServer(webhook.Options{Host: f.webhookHost, Port: f.webhookPort, CertDir: f.webhookCertDir, ClientCAName: f.clientCAName})
	var rotation *certs.Rotation
	if f.enableWebhook && f.certRotation {
		f.certOptions.Namespace = f.operatorNS
		f.certOptions.CertDir = f.webhookCertDir
		f.certOptions.RequireLeaderElection = f.leaderElect
		var err error
		if rotation, err = certs.New(f.certOptions); err != nil {
			return nil, nil, err
		}
		// Not listening, and so not ready, until this replica has a
		// certificate from the Secret.
		webhookServer = rotation.GateServer(webhookServer)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.QPS = -1
	if f.apiQPS > 0 {
		cfg.QPS, cfg.Burst = float32(f.apiQPS), f.apiBurst
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:  f.probeAddr,
		PprofBindAddress:        f.pprofAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: f.leaderElectNS,
		// The process exits right after the manager stops: handing the
		// Lease over at once spares the other replica the lease timeout.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         snapshot.CacheOptions(),
		WebhookServer:                 webhookServer,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("creating manager: %w", err)
	}
	return mgr, rotation, nil
}

// startWebhookInformers starts the informers the webhook reads (budgets,
// nodes, pods and PodDisruptionBudgets). A replica that is not the leader
// runs no controller that would start them: otherwise its first eviction
// would wait for them.
func startWebhookInformers(ctx context.Context, mgr ctrl.Manager) error {
	for _, obj := range []client.Object{&policyv1alpha1.TopologyDisruptionBudget{}, &corev1.Node{}, &corev1.Pod{}, &policyv1.PodDisruptionBudget{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("starting the informer of %T: %w", obj, err)
		}
	}
	return nil
}

// addChecks adds the probes: alive; ready once the caches the decisions
// read have synced, while not shutting down, and once the webhook server
// listens.
func addChecks(mgr ctrl.Manager, draining *atomic.Bool, webhookServed bool) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("informers", func(req *http.Request) error {
		// Not ready, so not sent webhook traffic, until the caches the
		// decisions read have synced.
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("informer caches have not synced yet")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("adding ready check: %w", err)
	}
	if err := mgr.AddReadyzCheck("draining", func(*http.Request) error {
		if draining.Load() {
			return errors.New("shutting down")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("adding ready check: %w", err)
	}
	if webhookServed {
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return fmt.Errorf("adding webhook ready check: %w", err)
		}
	}
	return nil
}

func drainingSignalHandler(draining *atomic.Bool, shutdownDelay time.Duration) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-signals
		draining.Store(true)
		ctrl.Log.WithName("setup").Info("shutting down: not ready, still answering", "delay", shutdownDelay.String())
		select {
		case <-time.After(shutdownDelay):
		case <-signals:
		}
		cancel()
		<-signals
		os.Exit(1)
	}()
	return ctx
}

func defaultShutdownDelay() time.Duration {
	if inCluster() {
		return 5 * time.Second
	}
	return 0
}

// inCluster tells whether the manager runs in a pod, where the webhook's
// certificate is the operator's to manage.
func inCluster() bool { return os.Getenv("KUBERNETES_SERVICE_HOST") != "" }

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// checkClientCAName refuses a --webhook-client-ca-name that cannot work:
// an absolute path (controller-runtime joins it to --webhook-cert-dir), or,
// with --cert-rotation, a file the rotation writes, whose CA signs the
// operator's serving certificate, not the API server's client certificate.
func checkClientCAName(name string, rotation bool) error {
	if name == "" {
		return nil
	}
	if filepath.IsAbs(name) {
		return fmt.Errorf("--webhook-client-ca-name must be relative to --webhook-cert-dir, got %q", name)
	}
	if rotation {
		switch filepath.Clean(name) {
		case certs.CertFile, certs.KeyFile, certs.CAFile:
			return fmt.Errorf("--webhook-client-ca-name=%s names a file --cert-rotation writes (the operator's own serving certificate and CA); mount the CA of the API server's client certificate under another name, e.g. client-ca/ca.crt", name)
		}
	}
	return nil
}
