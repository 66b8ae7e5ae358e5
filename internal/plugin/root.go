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

// Package plugin is kubectl-tdb: kubectl tdb can-drain, why, plan, status
// and convert. It reads the cluster with list calls and decides with
// internal/predict, which decides with the eviction webhook's own code;
// convert reads only its input.
package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"
)

// Version is set at build time (-ldflags -X).
var Version = "dev"

// APIVersion is the apiVersion of the documents -o json and -o yaml print.
const APIVersion = "tdb.dev/v1alpha1"

// Exit statuses.
const (
	// ExitNo: the answer is no (a pod cannot be evicted now, a node cannot
	// be drained now).
	ExitNo = 1
	// ExitFailed: the question could not be answered.
	ExitFailed = 2
)

// ExitError carries the exit status of a command; a nil Err prints
// nothing (the output has said why).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// answeredNo is the error of a command whose answer is no.
var answeredNo = &ExitError{Code: ExitNo}

// ExitCode is the process's exit status for a command's error.
func ExitCode(err error) int {
	var e *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.Code
	}
	return ExitFailed
}

// options are shared by the commands.
type options struct {
	flags  *genericclioptions.ConfigFlags
	out    string
	now    func() time.Time
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// NewCommand is kubectl tdb.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), now: time.Now, stdin: streams.In, stdout: streams.Out, stderr: streams.ErrOut}
	root := &cobra.Command{
		Use:   "kubectl-tdb",
		Short: "Can these nodes be drained now, and if not, why and in what order? For TopologyDisruptionBudgets and PodDisruptionBudgets together.",
		Long: `kubectl tdb answers, from the cluster as it is now, what evictions would get:
the TopologyDisruptionBudgets (decided as the tdb-operator's eviction webhook
decides them, with its own code) and the policy/v1 PodDisruptionBudgets
(decided as the API server does). It only reads, unless --verify asks for
server-side dry-run evictions, which change nothing.

Exit status: 0 yes, 1 no (named in the output), 2 error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl tdb",
		},
	}
	o.flags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVarP(&o.out, "output", "o", "table", "Output format: table, json or yaml.")
	root.AddCommand(newCanDrainCommand(o), newWhyCommand(o), newPlanCommand(o), newStatusCommand(o), newConvertCommand(o), &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version.",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			_, _ = fmt.Fprintf(o.stdout, "kubectl-tdb %s\n", Version)
		},
	})
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	return root
}

// checkOutput refuses an unknown -o before anything is read.
func (o *options) checkOutput() error {
	switch o.out {
	case "table", "json", "yaml":
		return nil
	}
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf("unknown output format %q: use table, json or yaml", o.out)}
}

// print writes doc as JSON or YAML, or calls table.
func (o *options) print(doc any, table func(io.Writer)) error {
	switch o.out {
	case "json":
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.stdout, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		_, err = o.stdout.Write(b)
		return err
	}
	table(o.stdout)
	return nil
}

// TypeMeta heads every document -o json and -o yaml print.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func typeMeta(kind string) TypeMeta { return TypeMeta{APIVersion: APIVersion, Kind: kind} }
