package main

import (
	"bytes"
	"errors"
	"testing"
)

func TestRunRefusesWhatItCannotRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "the only command is explain"},
		{"another command", []string{"tree", "deploy/web"}, "the only command is explain"},
		{"no object", []string{"explain", "-n", "default"}, "want one KIND/NAME, got 0"},
		{"two objects", []string{"explain", "deploy/a", "deploy/b"}, "want one KIND/NAME, got 2"},
		{"an unknown output", []string{"explain", "deploy/web", "-o", "yaml"}, "-o yaml: want text or json"},
		{"an unknown flag", []string{"explain", "deploy/web", "--all"}, "flag provided but not defined: -all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t.Context(), tc.args, &bytes.Buffer{})
			var bad usageError
			if !errors.As(err, &bad) || err.Error() != tc.want {
				t.Errorf("run(%q) = %v; want the usage error %q", tc.args, err, tc.want)
			}
		})
	}
}
