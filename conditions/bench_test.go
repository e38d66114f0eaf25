package conditions_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/conditions"
)

func benchObject() *object {
	obj := &object{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	for _, typ := range []string{conditions.Available, conditions.Progressing, conditions.Degraded, conditions.Ready} {
		conditions.MarkTrue(obj, typ, "AsExpected", "")
	}
	return obj
}

func BenchmarkSetUnchanged(b *testing.B) {
	obj := benchObject()
	c := metav1.Condition{Type: conditions.Ready, Status: metav1.ConditionTrue, Reason: "AsExpected"}
	for b.Loop() {
		if conditions.Set(obj, c) {
			b.Fatal("changed")
		}
	}
}

func BenchmarkSetStatusFlip(b *testing.B) {
	obj := benchObject()
	flip := [2]metav1.Condition{
		{Type: conditions.Ready, Status: metav1.ConditionFalse, Reason: "Down"},
		{Type: conditions.Ready, Status: metav1.ConditionTrue, Reason: "AsExpected"},
	}
	i := 0
	for b.Loop() {
		conditions.Set(obj, flip[i%2])
		i++
	}
}

func BenchmarkMarkTrueUnchanged(b *testing.B) {
	obj := benchObject()
	for b.Loop() {
		conditions.MarkTrue(obj, conditions.Ready, "AsExpected", "")
	}
}

func BenchmarkSummarizeUnchanged(b *testing.B) {
	obj := benchObject()
	conditions.MarkFalse(obj, conditions.Degraded, "AsExpected", "")
	for b.Loop() {
		conditions.Summarize(obj, conditions.Ready, conditions.Available, conditions.Progressing, conditions.Degraded)
	}
}

func BenchmarkFind(b *testing.B) {
	obj := benchObject()
	for b.Loop() {
		_ = conditions.Find(obj, conditions.Ready)
	}
}
