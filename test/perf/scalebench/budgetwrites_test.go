//go:build perf

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

package scalebench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A PodDisruptionBudget's status has two writers in core: the eviction
// handler (kube-apiserver's pkg/registry/core/pod/storage/eviction.go,
// checkAndDecrement), which records each eviction it allows in the budget's
// status before it deletes the pod, and the disruption controller in
// kube-controller-manager. The eviction handler writes through the API
// server's loopback client: a PUT poddisruptionbudgets/status request like
// any other, which apiserver_request_total counts as it counts the
// controller's. That counter therefore holds both writers' writes, each
// once; the audit log (auditPolicy) tells them apart by who sent them.

// auditPolicy is the bench's audit policy, relative to the repository: it
// logs who wrote each PodDisruptionBudget status, and nothing else.
const auditPolicy = "test/perf/scalebench/audit-pdb-status.yaml"

// The writers of a PodDisruptionBudget's status as pdbStatusWriters counts
// them, and the suffix of its keys for their writes answered 409 ("eviction
// handler answered 409"): the eviction handler's writes less its conflicts
// are the evictions it allowed.
const (
	writerEvictionHandler      = "eviction handler"
	writerDisruptionController = "disruption controller"
	writerOther                = "other"
	writesConflicted           = "answered 409"
)

// auditEvent is what pdbStatusWriters reads of an audit event.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// pdbStatusWriters counts the PodDisruptionBudget status writes (update or
// patch requests, whatever their answer) of an audit log that completed
// after from and no later than to, by writer, and each writer's answered
// 409.
func pdbStatusWriters(r io.Reader, from, to time.Time) (map[string]int, error) {
	out := map[string]int{}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		// Only the lines that can be such a write are decoded: an audit
		// log of another policy may hold every pod's deletion in full.
		if bytes.Contains(line, []byte(`"poddisruptionbudgets"`)) {
			var e auditEvent
			if jerr := json.Unmarshal(line, &e); jerr != nil {
				return nil, fmt.Errorf("reading the audit log: %w", jerr)
			}
			if isPDBStatusWrite(e) && e.StageTimestamp.After(from) && !e.StageTimestamp.After(to) {
				w := pdbWriter(e)
				out[w]++
				if e.ResponseStatus != nil && e.ResponseStatus.Code == 409 {
					out[w+" "+writesConflicted]++
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the audit log: %w", err)
		}
	}
}

func isPDBStatusWrite(e auditEvent) bool {
	return e.Stage == "ResponseComplete" && (e.Verb == "update" || e.Verb == "patch") && e.ObjectRef != nil &&
		e.ObjectRef.APIGroup == "policy" && e.ObjectRef.Resource == "poddisruptionbudgets" && e.ObjectRef.Subresource == "status"
}

// pdbWriter names the writer of a status write: the API server's loopback
// identity is the eviction handler's (no other part of the API server
// writes a budget's status); kube-controller-manager's clients carry their
// controller's name in their user agent (or, with service account
// credentials, in their user).
func pdbWriter(e auditEvent) string {
	switch {
	case e.User.Username == "system:apiserver":
		return writerEvictionHandler
	case strings.HasSuffix(e.UserAgent, "/disruption-controller") || strings.HasSuffix(e.User.Username, ":disruption-controller"):
		return writerDisruptionController
	}
	return writerOther
}

// auditLog reads the writes of one turn from the cluster's audit log.
type auditLog struct {
	path   string
	offset int64
	from   time.Time
}

// markAuditLog notes where the audit log ends now: the turn's writes are
// those after. The log is in the cluster's directory (hack/cluster/up.sh);
// a cluster without one gives a mark that reads nothing.
func markAuditLog(kubeconfig string) *auditLog {
	a := &auditLog{path: filepath.Join(filepath.Dir(kubeconfig), "logs", "audit.log"), from: time.Now()}
	if st, err := os.Stat(a.path); err == nil {
		a.offset = st.Size()
	}
	return a
}

// writers counts the PodDisruptionBudget status writes since the mark that
// completed until to; nil without an audit log.
func (a *auditLog) writers(to time.Time) (map[string]int, error) {
	f, err := os.Open(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return nil, err
	}
	return pdbStatusWriters(f, a.from, to)
}
