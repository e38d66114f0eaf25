package storage_test

import (
	"os"
	"testing"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// TestMain leaves ExampleMigrate, which starts an API server, out of go test -short.
func TestMain(m *testing.M) {
	fasttier.SkipExamples("ExampleMigrate")
	os.Exit(m.Run())
}
