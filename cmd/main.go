// Command manager runs tdb-operator: the TopologyDisruptionBudget status
// controller (and, in later releases, the eviction webhook and rollout
// controllers).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/controllers"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	evictionwebhook "github.com/tdb-operator/tdb-operator/internal/webhook"
)

// Leader election (--leader-elect) needs a Lease and records events.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		metricsAddr    string
		probeAddr      string
		leaderElect    bool
		leaderElectNS  string
		recordTimeout  = budget.DefaultRecordTimeout
		webhookPort    int
		webhookCertDir string
		webhookHost    string
		enableWebhook  bool
		operatorNS     string
		zapOpts        = zap.Options{Development: false}
		managerOptions ctrl.Options
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader among replicas for the controllers (the webhook is served by every replica).")
	flag.StringVar(&leaderElectNS, "leader-election-namespace", "", "Namespace of the leader election Lease; default: the namespace the manager runs in.")
	flag.DurationVar(&recordTimeout, "record-timeout", budget.DefaultRecordTimeout, "How long an eviction record protects a pod that keeps running without being deleted before it is taken for a refused eviction and dropped.")
	flag.BoolVar(&enableWebhook, "enable-webhook", true, "Serve the pods/eviction admission webhook.")
	flag.StringVar(&webhookHost, "webhook-host", "", "Address the webhook server binds to; empty means all interfaces.")
	flag.IntVar(&webhookPort, "webhook-port", 9443, "Port of the webhook server (TLS).")
	flag.StringVar(&webhookCertDir, "webhook-cert-dir", "", "Directory holding tls.crt and tls.key for the webhook server; default: <temp dir>/k8s-webhook-server/serving-certs.")
	flag.StringVar(&operatorNS, "operator-namespace", envOr("POD_NAMESPACE", "tdb-system"), "The operator's own namespace; evictions there always pass, so draining the operator's node cannot deadlock. Default: $POD_NAMESPACE, else tdb-system.")
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if recordTimeout <= 0 {
		return fmt.Errorf("--record-timeout must be positive, got %s", recordTimeout)
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))

	managerOptions = ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "tdb-operator.policy.tdb.dev",
		LeaderElectionNamespace: leaderElectNS,
		Cache:                   controllers.CacheOptions(),
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: webhookHost, Port: webhookPort, CertDir: webhookCertDir,
		}),
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := controllers.SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	if err := controllers.SetupAll(mgr, controllers.Options{RecordTimeout: recordTimeout}); err != nil {
		return err
	}
	if enableWebhook {
		evictionwebhook.Register(mgr, evictionwebhook.Options{ExemptNamespace: operatorNS})
	}
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
	if enableWebhook {
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return fmt.Errorf("adding webhook ready check: %w", err)
		}
	}
	ctrl.Log.WithName("setup").Info("starting manager")
	return mgr.Start(ctx)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
