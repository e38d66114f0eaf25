package conditions_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/conditions"
)

// Memcached stands for a generated API type.
type Memcached struct {
	metav1.ObjectMeta
	Status struct{ Conditions []metav1.Condition }
}

func (m *Memcached) GetConditions() []metav1.Condition  { return m.Status.Conditions }
func (m *Memcached) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

func ExampleSet() {
	at := time.Date(2024, 5, 1, 10, 0, 0, 300_000_000, time.UTC)
	m := &Memcached{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	available := func(msg string) metav1.Condition {
		return metav1.Condition{Type: conditions.Available, Status: metav1.ConditionFalse, Reason: "Deploying",
			Message: msg, LastTransitionTime: metav1.NewTime(at)}
	}

	fmt.Println(conditions.Set(m, available("1 of 3 replicas ready")))
	at = at.Add(time.Minute)
	fmt.Println(conditions.Set(m, available("1 of 3 replicas ready")))
	fmt.Println(conditions.Set(m, available("2 of 3 replicas ready")))

	// Only a new status moves the transition time.
	c := conditions.Find(m, conditions.Available)
	fmt.Println(c.Status, c.Reason, c.Message, c.ObservedGeneration, c.LastTransitionTime.UTC().Format(time.RFC3339))
	// Output:
	// true
	// false
	// true
	// False Deploying 2 of 3 replicas ready 2 2024-05-01T10:00:00Z
}

func ExampleMarkTrue() {
	m := &Memcached{}
	if conditions.MarkTrue(m, conditions.Available, "MinimumReplicasAvailable", "Deployment has %d ready replicas", 3) {
		fmt.Println("write status")
	}
	if !conditions.MarkTrue(m, conditions.Available, "MinimumReplicasAvailable", "Deployment has %d ready replicas", 3) {
		fmt.Println("nothing to write")
	}
	fmt.Println(conditions.IsTrue(m, conditions.Available))
	// Output:
	// write status
	// nothing to write
	// true
}

func ExampleSet_invalidReason() {
	m := &Memcached{}
	conditions.Set(m, metav1.Condition{Type: conditions.Ready, Status: metav1.ConditionFalse, Reason: "out of memory"})
	c := conditions.Find(m, conditions.Ready)
	fmt.Println(c.Reason)
	fmt.Println(c.Message)
	// Output:
	// InvalidReason
	// invalid condition reason "out of memory": must start with a letter, contain only letters, digits, '_', ',' and ':', and end with a letter, digit or '_'
}

func ExampleSummarize() {
	m := &Memcached{}
	conditions.MarkTrue(m, conditions.Available, "MinimumReplicasAvailable", "")
	conditions.MarkTrue(m, conditions.Progressing, "NewReplicaSetAvailable", "")
	conditions.MarkTrue(m, conditions.Degraded, "ImagePullBackOff", "cannot pull memcached:1.4.36-alpine")

	conditions.Summarize(m, conditions.Ready, conditions.Available, conditions.Progressing, conditions.Degraded)
	ready := conditions.Find(m, conditions.Ready)
	fmt.Println(ready.Status, ready.Reason, ready.Message)

	conditions.MarkFalse(m, conditions.Degraded, "AsExpected", "")
	conditions.Summarize(m, conditions.Ready, conditions.Available, conditions.Progressing, conditions.Degraded)
	fmt.Println(ready.Status, ready.Reason)
	// Output:
	// False ImagePullBackOff cannot pull memcached:1.4.36-alpine
	// True AllConditionsMet
}

func ExampleList() {
	var conds []metav1.Condition
	conditions.MarkUnknown(conditions.List(&conds, 4), conditions.Progressing, "Reconciling", "")
	fmt.Println(conds[0].Type, conds[0].Status, conds[0].ObservedGeneration)
	// Output:
	// Progressing Unknown 4
}
