package reconciletest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The refusal watch reads every line the API server appends to its audit log, across a
// rotation, and tells each refusal to the watchers of its user and namespace alone.
func TestRefusalWatchFollowsTheAuditLogAcrossARotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	w := watchRefusals(path)
	defer w.close()
	told := make(chan string, 10)
	defer w.watch("op", "mine", func(ev auditEvent) { told <- ev.Verb + " " + ev.ObjectRef.Resource })()

	event := func(user, namespace, verb string, code int) string {
		return fmt.Sprintf(`{"kind":"Event","verb":%q,"user":{"username":%q},"objectRef":{"resource":"statefulsets","namespace":%q,"apiGroup":"apps"},"responseStatus":{"code":%d}}`+"\n",
			verb, user, namespace, code)
	}
	appendTo := func(path, lines string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(lines); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(path, event("op", "mine", "get", 200)+ // allowed
		event("op", "theirs", "list", 403)+ // another namespace
		event("someone", "mine", "patch", 403)+ // another user
		event("op", "mine", "create", 403))
	var got []string
	timeout := time.After(10 * time.Second)
	await := func(n int) {
		for len(got) < n {
			select {
			case s := <-told:
				got = append(got, s)
			case <-timeout:
				t.Fatalf("told of %v; want %d refusals", got, n)
			}
		}
	}
	await(1)
	appendTo(path, event("op", "mine", "delete", 403)) // read before the rotation, or after it
	if err := os.Rename(path, path+".1"); err != nil { // as the API server rotates it
		t.Fatal(err)
	}
	appendTo(path, event("op", "mine", "watch", 403))
	await(3)
	want := []string{"create statefulsets", "delete statefulsets", "watch statefulsets"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("told of %v; want %v", got, want)
	}
	select {
	case s := <-told:
		t.Errorf("told of %s too", s)
	case <-time.After(50 * time.Millisecond):
	}
}
