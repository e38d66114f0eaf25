package conditions

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Reasons of the conditions that Summarize sets when it does not copy one.
const (
	// AllConditionsMet is the reason of a True summary.
	AllConditionsMet = "AllConditionsMet"
	// NotReported is the reason of an Unknown summary when a condition it
	// depends on is missing.
	NotReported = "NotReported"
)

// NegativePolarity reports whether True is the bad status of condition typ, as
// it is for Degraded, Stalled and Reconciling. Every other type is positive: True is good.
func NegativePolarity(typ string) bool {
	return typ == Degraded || typ == Stalled || typ == Reconciling
}

// Summarize sets condition typ from the conditions named in from, and reports
// whether anything changed. Each is good when it has the good status of its
// polarity (see NegativePolarity); a negative one that is absent is good too,
// since nothing is wrong until someone says so. The summary is:
//
//   - False, with the reason and message of the first bad condition, when any is
//     bad (a positive one False, a negative one True);
//   - Unknown, with the reason and message of the first that is neither good
//     nor bad (or NotReported for a missing positive one), when none is bad but
//     not all are good;
//   - True, with reason AllConditionsMet, when all are good.
func Summarize(obj Setter, typ string, from ...string) bool {
	summary := metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: AllConditionsMet}
	undecided := func(c metav1.Condition) {
		if summary.Status == metav1.ConditionTrue {
			summary = metav1.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: c.Reason, Message: c.Message}
		}
	}
	for _, t := range from {
		good, bad := metav1.ConditionTrue, metav1.ConditionFalse
		if NegativePolarity(t) {
			good, bad = bad, good
		}
		c := Find(obj, t)
		switch {
		case c == nil && good == metav1.ConditionFalse:
			// Nothing is wrong until someone says so.
		case c == nil:
			undecided(metav1.Condition{Reason: NotReported, Message: t + " is not reported yet"})
		case c.Status == bad:
			return Set(obj, metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: c.Reason, Message: c.Message})
		case c.Status != good:
			undecided(*c)
		}
	}
	return Set(obj, summary)
}
