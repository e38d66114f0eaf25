package explore

import "testing"

func TestReplayFlagsAreQuotedForTheShellWhenTheyNeedIt(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"-explore.seed=7", "-explore.seed=7"},
		{"-explore.matrix.mutants=stale", "-explore.matrix.mutants=stale"},
		{"-explore.matrix.mutants=a deletion|a retry", "'-explore.matrix.mutants=a deletion|a retry'"},
		{"-explore.x=it's", `'-explore.x=it'\''s'`},
	} {
		if got := shellQuote(tc.arg); got != tc.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tc.arg, got, tc.want)
		}
	}
}
