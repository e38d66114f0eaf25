package reconciletest

import (
	"strings"
	"testing"
)

func TestNamePrefixMakesAGenerateNameOfATestName(t *testing.T) {
	tests := []struct {
		testName, want string
	}{
		{"TestRollout", "testrollout-"},
		{"TestRollout/scales_up_to_3", "testrollout-scales-up-to-3-"},
		{"Test/__/", "test-"},
		{"___", "test-"},
		{strings.Repeat("A", 100), strings.Repeat("a", 40) + "-"},
		{strings.Repeat("a", 39) + "_b", strings.Repeat("a", 39) + "-"},
	}
	for _, tt := range tests {
		t.Run(tt.testName, func(t *testing.T) {
			if got := namePrefix(tt.testName); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
