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

// Command kubectl-tdb is the kubectl plugin of tdb-operator: kubectl tdb
// can-drain, why, plan, status and convert (see docs/kubectl-tdb.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/tdb-operator/tdb-operator/internal/plugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	err := cmd.ExecuteContext(ctx)
	stop()
	var e *plugin.ExitError
	if err != nil && (!errors.As(err, &e) || e.Err != nil) {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
	}
	os.Exit(plugin.ExitCode(err))
}
