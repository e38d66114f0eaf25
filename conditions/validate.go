package conditions

import (
	"errors"
	"fmt"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InvalidReason is the reason Set stores in place of one the API server would
// reject.
const InvalidReason = "InvalidReason"

// The API server's limits for metav1.Condition.
const (
	maxReasonLength  = 1024
	maxMessageLength = 32768
)

// ValidateReason applies the API server's rule for a condition reason: non-empty,
// at most 1024 characters, matching ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$.
// The error names the reason.
func ValidateReason(reason string) error {
	switch {
	case reason == "":
		return errors.New(`invalid condition reason "": must not be empty`)
	case len(reason) > maxReasonLength:
		return fmt.Errorf("invalid condition reason %q: longer than %d characters", reason, maxReasonLength)
	case !isReason(reason):
		return fmt.Errorf("invalid condition reason %q: must start with a letter, "+
			"contain only letters, digits, '_', ',' and ':', and end with a letter, digit or '_'", reason)
	}
	return nil
}

// isReason matches ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ without the cost
// of a regular expression on every Set.
func isReason(s string) bool {
	last := len(s) - 1
	for i := 0; i <= last; i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		word := letter || '0' <= c && c <= '9' || c == '_'
		switch {
		case i == 0 && !letter,
			i == last && !word,
			!word && c != ',' && c != ':':
			return false
		}
	}
	return true
}

// normalize makes c acceptable to the API server, so that a programming error
// shows on the object instead of failing the status write.
func normalize(c *metav1.Condition) {
	switch c.Status {
	case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
	default:
		c.Message = prefix(fmt.Errorf("invalid condition status %q: must be True, False or Unknown", c.Status), c.Message)
		c.Status = metav1.ConditionUnknown
	}
	if err := ValidateReason(c.Reason); err != nil {
		c.Reason = InvalidReason
		c.Message = prefix(err, c.Message)
	}
	c.Message = truncate(c.Message, maxMessageLength)
}

func prefix(err error, msg string) string {
	if msg == "" {
		return err.Error()
	}
	return err.Error() + ": " + msg
}

// truncate cuts s to at most n bytes without splitting a UTF-8 character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// A character is at most utf8.UTFMax bytes long; looking further back
	// would only walk through bytes that are not UTF-8 anyway.
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n]
}
