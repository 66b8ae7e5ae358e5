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
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// oneSecretManager is mgr as the rotator sees it: every call goes to mgr,
// except that the REST config the rotator builds its cache from narrows
// Secret collection requests to the one Secret.
//
// The rotator (cert-controller v0.16.0) builds that cache itself, with no
// option to narrow it: its Secret informer would list and watch every
// Secret of the operator's namespace, and RBAC would have to grant that.
// With a metadata.name field selector on the list and the watch, which
// RBAC authorizes against resourceNames, the Role names the Secret for
// every verb, and other Secrets of the namespace (Helm's release records,
// say) are out of the operator's reach. test/integration/rbac runs the
// rotation with the Role's rights only.
type oneSecretManager struct {
	manager.Manager
	cfg *rest.Config
}

func newOneSecretManager(mgr manager.Manager, namespace, name string) oneSecretManager {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &oneSecretRequests{next: rt, collection: "/api/v1/namespaces/" + namespace + "/secrets", name: name}
	})
	return oneSecretManager{Manager: mgr, cfg: cfg}
}

// GetConfig is the narrowed config.
func (m oneSecretManager) GetConfig() *rest.Config { return m.cfg }

// oneSecretRequests adds a metadata.name field selector to the lists and
// watches of one namespace's Secrets; every other request passes as it is.
type oneSecretRequests struct {
	next http.RoundTripper
	// collection is the path of the namespace's Secrets, without the
	// config's host path prefix (a proxy may put one in front).
	collection string
	name       string
}

// RoundTrip sends req, narrowed when it lists or watches the Secrets.
func (o *oneSecretRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, o.collection) {
		return o.next.RoundTrip(req)
	}
	term := fields.OneTermEqualSelector("metadata.name", o.name).String()
	q := req.URL.Query()
	switch sel := q.Get("fieldSelector"); {
	case sel == "":
		q.Set("fieldSelector", term)
	case sel != term:
		// Both: the API server ANDs a selector's terms.
		q.Set("fieldSelector", sel+","+term)
	}
	// A RoundTripper must not change the request it is given.
	r := req.Clone(req.Context())
	r.URL.RawQuery = q.Encode()
	return o.next.RoundTrip(r)
}
