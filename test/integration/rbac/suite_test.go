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

// Package rbac_test applies config/rbac, named and placed as config/default
// installs it, to a real kube-apiserver (envtest, which authorizes with
// RBAC) and checks the operator's ServiceAccount: every grant of the table
// (test/rbac.Expected, the table of docs/install.md) allowed, rights beyond
// it refused, the rights the API server reports for it exactly the table's,
// and the manager, its certificate rotation and its leader election at work
// with those rights and no request refused.
package rbac_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/tdb-operator/tdb-operator/test/integration/framework"
	rbactable "github.com/tdb-operator/tdb-operator/test/rbac"
)

var (
	env *envtest.Environment
	cfg *rest.Config
	k8s client.Client
	ctx = context.Background()
	// operator is the ServiceAccount config/rbac binds, as installed.
	operator corev1.ServiceAccount
)

func TestRBAC(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "The operator's RBAC, as its ServiceAccount (envtest)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, cfg, err = framework.StartAPIServer()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: framework.Scheme})
	Expect(err).NotTo(HaveOccurred())

	objs := installedRBAC()
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rbactable.Namespace}})).To(Succeed())
	Expect(objs.ServiceAccounts).To(HaveLen(1))
	operator = objs.ServiceAccounts[0]
	for _, o := range objs.all() {
		Expect(k8s.Create(ctx, o)).To(Succeed(), "%T %s", o, o.GetName())
	}
	// The rest of what the operator finds in its namespace: config/default's
	// empty certificate Secret and webhook configuration, and a Secret that
	// is none of its business.
	Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbactable.Namespace, Name: certSecret}})).To(Succeed())
	Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbactable.Namespace, Name: otherSecret},
		StringData: map[string]string{"release": "what Helm keeps of a release"}})).To(Succeed())
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "webhook", "manifests.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	Expect(yaml.Unmarshal(raw, &vwc)).To(Succeed())
	vwc.Name = webhookConfig
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].ClientConfig.Service.Name = "tdb-webhook-service"
		vwc.Webhooks[i].ClientConfig.Service.Namespace = rbactable.Namespace
	}
	Expect(k8s.Create(ctx, &vwc)).To(Succeed())

	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// installed are config/rbac's objects as config/default installs them.
type installed struct{ rbactable.Objects }

func (o *installed) all() []client.Object {
	var out []client.Object
	for i := range o.ServiceAccounts {
		out = append(out, &o.ServiceAccounts[i])
	}
	for i := range o.ClusterRoles {
		out = append(out, &o.ClusterRoles[i])
	}
	for i := range o.Roles {
		out = append(out, &o.Roles[i])
	}
	for i := range o.ClusterRoleBindings {
		out = append(out, &o.ClusterRoleBindings[i])
	}
	for i := range o.RoleBindings {
		out = append(out, &o.RoleBindings[i])
	}
	return out
}

// installedRBAC reads the files config/rbac's kustomization lists and
// names and places them as config/default's kustomization does (its
// namePrefix and namespace, the bindings' references included), as
// kustomize would, without it.
func installedRBAC() *installed {
	root := framework.RepoRoot()
	var def struct {
		Namespace  string `json:"namespace"`
		NamePrefix string `json:"namePrefix"`
	}
	raw, err := os.ReadFile(filepath.Join(root, "config", "default", "kustomization.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.Unmarshal(raw, &def)).To(Succeed())
	Expect(def.Namespace).To(Equal(rbactable.Namespace))
	var k struct {
		Resources []string `json:"resources"`
	}
	dir := filepath.Join(root, "config", "rbac")
	raw, err = os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.Unmarshal(raw, &k)).To(Succeed())
	o := &installed{}
	for _, f := range k.Resources {
		b, err := os.ReadFile(filepath.Join(dir, f))
		Expect(err).NotTo(HaveOccurred())
		Expect(rbactable.Parse(b, &o.Objects)).To(Succeed(), f)
	}
	ns, prefix := def.Namespace, def.NamePrefix
	for i := range o.ServiceAccounts {
		o.ServiceAccounts[i].Name, o.ServiceAccounts[i].Namespace = prefix+o.ServiceAccounts[i].Name, ns
	}
	for i := range o.ClusterRoles {
		o.ClusterRoles[i].Name = prefix + o.ClusterRoles[i].Name
	}
	for i := range o.Roles {
		o.Roles[i].Name, o.Roles[i].Namespace = prefix+o.Roles[i].Name, ns
	}
	for i := range o.ClusterRoleBindings {
		b := &o.ClusterRoleBindings[i]
		b.Name, b.RoleRef.Name = prefix+b.Name, prefix+b.RoleRef.Name
		for j := range b.Subjects {
			b.Subjects[j].Name, b.Subjects[j].Namespace = prefix+b.Subjects[j].Name, ns
		}
	}
	for i := range o.RoleBindings {
		b := &o.RoleBindings[i]
		b.Name, b.Namespace, b.RoleRef.Name = prefix+b.Name, ns, prefix+b.RoleRef.Name
		for j := range b.Subjects {
			b.Subjects[j].Name, b.Subjects[j].Namespace = prefix+b.Subjects[j].Name, ns
		}
	}
	// What test/install checks of the kustomize build holds here too.
	Expect(o.Check(rbactable.Expected, ns)).To(BeEmpty())
	return o
}

// identity is who a ServiceAccount's token authenticates as.
type identity struct {
	user   string
	groups []string
}

func serviceAccount(namespace, name string) identity {
	return identity{
		user:   "system:serviceaccount:" + namespace + ":" + name,
		groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// operatorIdentity is the operator's ServiceAccount's.
func operatorIdentity() identity { return serviceAccount(operator.Namespace, operator.Name) }

// as is the suite's admin config impersonating id.
func as(id identity) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: id.user, Groups: id.groups}
	return c
}
