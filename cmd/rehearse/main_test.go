package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTheCommandLineNamesTheBuildsAndTheObjects(t *testing.T) {
	c, err := parse([]string{"-objects", "a", "-objects", "b", "-crds", "crds", "-old", "bin/v1 -health-probe-bind-address={probe}", "-new", " bin/v2  -x ", "-settle", "2s", "-webhooks", "hooks"})
	if err != nil {
		t.Fatal(err)
	}
	r := c.rehearsal(nil)
	if !slices.Equal(c.objects, []string{"a", "b"}) ||
		!slices.Equal(r.Old.Command, []string{"bin/v1", "-health-probe-bind-address={probe}"}) ||
		!slices.Equal(r.New.Command, []string{"bin/v2", "-x"}) ||
		!slices.Equal(r.New.CRDs, []string{"crds"}) || !slices.Equal(r.New.Webhooks, []string{"hooks"}) || r.Old.Webhooks != nil || r.Settle != 2*time.Second || r.Nodes != 1 {
		t.Errorf("parsed %+v into %+v", c, r)
	}
}

func TestACommandLineThatCannotRunSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-crds", "c", "-old", "a", "-new", "b"}, "either as -objects or through -kubeconfig"},
		{[]string{"-objects", "o", "-kubeconfig", "k", "-crds", "c", "-old", "a", "-new", "b"}, "either as -objects or through -kubeconfig"},
		{[]string{"-objects", "o", "-old", "a", "-new", "b"}, "-crds is required"},
		{[]string{"-objects", "o", "-crds", "c", "-old", " ", "-new", "b"}, "-old and -new are required"},
		{[]string{"-objects", "o", "-crds", "c", "-old", "a", "-new", "b", "-nodes", "0"}, "-nodes must be at least 1"},
		{[]string{"-objects", "o", "-crds", "c", "-old", "a", "-new", "b", "extra"}, `unexpected argument "extra"`},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
	} {
		_, err := parse(tc.args)
		var bad usageError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}
