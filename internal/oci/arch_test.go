package oci_test

import "runtime"

func hostArch() string { return runtime.GOARCH }
