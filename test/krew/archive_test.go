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

package krew

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
)

// checkArchive returns every way the archive data breaks krew's rules for
// the platform entry pl that downloads it: its sha256 must be pl.sha256
// [validate]; krew unpacks only regular files and directories and refuses
// entries with ".." or an absolute path [download]; pl.files must install pl.bin
// [install] and a license file [vkm]; and where the platform is not Windows
// the bin must be executable, as krew keeps the archive's modes [ours].
func checkArchive(data []byte, pl platform) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != pl.Sha256 {
		fail("sha256 is %s, the manifest says %s", got, pl.Sha256)
	}
	if !strings.HasSuffix(pl.URI, ".tar.gz") {
		return append(problems, fmt.Sprintf("uri %q: only .tar.gz archives are checked here", pl.URI))
	}

	modes := map[string]int64{}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return append(problems, "not gzip: "+err.Error())
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return append(problems, "reading the tar: "+err.Error())
		}
		if hdr.Name == "pax_global_header" {
			continue // krew skips it too
		}
		if strings.Contains(hdr.Name, "..") || strings.HasPrefix(hdr.Name, "/") || strings.HasPrefix(hdr.Name, `\`) {
			fail("entry %q: krew refuses archives with such a path", hdr.Name)
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			modes[path.Clean(hdr.Name)] = hdr.Mode
		default:
			fail("entry %q is of tar type %q: krew unpacks only regular files and directories", hdr.Name, hdr.Typeflag)
		}
	}

	installed, moveProblems := installedFiles(slices.Collect(maps.Keys(modes)), pl.Files)
	problems = append(problems, moveProblems...)
	src, ok := installed[path.Clean(pl.Bin)]
	if !ok {
		fail("bin %q is not among the installed files %v", pl.Bin, slices.Sorted(maps.Keys(installed)))
	}
	if !hasLicense(installed) {
		fail("no license file among the installed files %v", slices.Sorted(maps.Keys(installed)))
	}
	unix := false
	for _, env := range selected(pl.Selector) {
		unix = unix || env.os != "windows"
	}
	if ok && unix && modes[src]&0o111 == 0 {
		fail("bin %q (%s in the archive) is not executable: mode %o", pl.Bin, src, modes[src])
	}
	return problems
}
