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

package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestRulesWithPromtool runs `promtool check rules` on the PrometheusRule's
// groups and `promtool test rules` on rules_test.yaml. make test-rules
// builds the pinned promtool and sets PROMTOOL; without it the test is
// skipped (the unit tier needs no promtool).
func TestRulesWithPromtool(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Skip("PROMTOOL is not set: make test-rules builds promtool and runs this test")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), ruleGroupsFile(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, promtoolTests), read(t, promtoolTests), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", promtoolTests}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
		if err != nil {
			t.Errorf("promtool %s: %v", strings.Join(args, " "), err)
		}
	}
}

// promtoolTestFile is the part of a promtool test file read here.
type promtoolTestFile struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			EvalTime  string `json:"eval_time"`
			Alertname string `json:"alertname"`
			ExpAlerts []struct {
				ExpLabels map[string]string `json:"exp_labels"`
			} `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// Every alert, at every severity, is shown to fire by some promtool test,
// and every alert is shown to stay quiet by another.
func TestEveryAlertIsShownToFireAndToStayQuiet(t *testing.T) {
	var tf promtoolTestFile
	if err := yaml.Unmarshal(read(t, promtoolTests), &tf); err != nil {
		t.Fatal(err)
	}
	if len(tf.RuleFiles) != 1 || tf.RuleFiles[0] != "rules.yaml" {
		t.Errorf("rule_files %v, want [rules.yaml], the file TestRulesWithPromtool writes", tf.RuleFiles)
	}
	fires := map[string]bool{} // alertname/severity
	quiet := map[string]bool{} // alertname
	for _, tc := range tf.Tests {
		for _, at := range tc.AlertRuleTest {
			if len(at.ExpAlerts) == 0 {
				quiet[at.Alertname] = true
			}
			for _, a := range at.ExpAlerts {
				fires[at.Alertname+"/"+a.ExpLabels["severity"]] = true
			}
		}
	}
	alerts := 0
	for _, g := range loadRules(t).Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			if !fires[r.Alert+"/"+r.Labels["severity"]] {
				t.Errorf("no promtool test shows %s (severity %s) firing", r.Alert, r.Labels["severity"])
			}
			if !quiet[r.Alert] {
				t.Errorf("no promtool test shows %s staying quiet", r.Alert)
			}
		}
	}
	if alerts < 10 {
		t.Errorf("found %d alerts", alerts)
	}
}

// Every alert has a severity, a summary and a description, and links the
// section of docs/runbooks.md named after it, which says what the alert
// means, how to confirm it and how to fix it.
func TestEveryAlertLinksItsRunbook(t *testing.T) {
	doc := string(read(t, runbooksFile))
	sections := map[string]string{} // anchor -> section text
	heading := regexp.MustCompile(`(?m)^## (.+)$`)
	locs := heading.FindAllStringSubmatchIndex(doc, -1)
	for i, loc := range locs {
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		sections[anchor(doc[loc[2]:loc[3]])] = doc[loc[1]:end]
	}
	linked := map[string]bool{}
	severities := map[string]bool{"warning": true, "critical": true}
	for _, g := range loadRules(t).Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if !severities[r.Labels["severity"]] {
				t.Errorf("%s: severity %q, want warning or critical", r.Alert, r.Labels["severity"])
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			want := runbookBase + strings.ToLower(r.Alert)
			if got := r.Annotations["runbook_url"]; got != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
				continue
			}
			linked[strings.ToLower(r.Alert)] = true
			section, ok := sections[strings.ToLower(r.Alert)]
			if !ok {
				t.Errorf("%s: docs/runbooks.md has no section \"## %s\"", r.Alert, r.Alert)
				continue
			}
			for _, sub := range []string{"### What it means", "### How to confirm", "### How to fix"} {
				if !strings.Contains(section, "\n"+sub+"\n") {
					t.Errorf("docs/runbooks.md, %s: no %q", r.Alert, sub)
				}
			}
		}
	}
	var orphans []string
	for a := range sections {
		if strings.HasPrefix(a, "tdb") && !linked[a] {
			orphans = append(orphans, a)
		}
	}
	sort.Strings(orphans)
	if len(orphans) > 0 {
		t.Errorf("docs/runbooks.md has sections for alerts that do not exist: %v", orphans)
	}
}

// anchor is the fragment GitHub gives a Markdown heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
