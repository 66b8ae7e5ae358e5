//go:build integration

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

package webhook_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// recordTimeout is short so the suite sees a phantom record expire.
const recordTimeout = 5 * time.Second

var (
	env *envtest.Environment
	cfg *rest.Config
	k8s client.Client
	cs  *kubernetes.Clientset
	// webhookMgr serves the webhook the API server calls; controllerMgr
	// runs the status controller, as the leader of a two-replica install.
	webhookMgr, controllerMgr *framework.Manager
	ctx                       = context.Background()
)

func TestWebhook(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Eviction webhook (envtest: the real kube-apiserver calls the webhook over TLS)")
}

func startController() {
	var err error
	controllerMgr, err = framework.StartManagerWith(cfg, framework.ManagerOptions{Clock: clock.RealClock{}, RecordTimeout: recordTimeout})
	Expect(err).NotTo(HaveOccurred())
}

func stopController() {
	Expect(controllerMgr.Stop()).To(Succeed())
	controllerMgr = nil
}

func startWebhook() {
	var err error
	webhookMgr, err = framework.StartManagerWith(cfg, framework.ManagerOptions{
		Clock: clock.RealClock{}, RecordTimeout: recordTimeout, NoController: true, Webhook: framework.WebhookOptions(env),
	})
	Expect(err).NotTo(HaveOccurred())
}

func stopWebhook() {
	Expect(webhookMgr.Stop()).To(Succeed())
	webhookMgr = nil
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, cfg, err = framework.StartAPIServerWithWebhook()
	Expect(err).NotTo(HaveOccurred())
	cfg.QPS, cfg.Burst = 500, 1000
	k8s, err = client.New(cfg, client.Options{Scheme: framework.Scheme})
	Expect(err).NotTo(HaveOccurred())
	cs = kubernetes.NewForConfigOrDie(cfg)
	startWebhook()
	startController()
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
})

var _ = AfterSuite(func() {
	if controllerMgr != nil {
		stopController()
	}
	if webhookMgr != nil {
		stopWebhook()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

type webhookOptions = webhook.Options
