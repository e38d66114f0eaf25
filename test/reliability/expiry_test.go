package reliability

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// withUncachedWatches replaces, until the test ends, the shared control plane by one whose
// API server serves every watch from etcd rather than from its watch cache, so that a
// watch resumed from a compacted revision meets etcd's compaction itself. A watch cache
// would hide a short compaction behind the history it keeps.
func withUncachedWatches(t *testing.T) {
	t.Helper()
	var crds []string
	for _, op := range operators {
		crds = append(crds, filepath.Join("..", "..", "examples", op.name, "config", "crd", "bases"))
	}
	dedicated, err := reconciletest.Start(t.Context(), reconciletest.Options{
		CRDDirectories: crds, Nodes: 2, APIServerFlags: map[string]string{"watch-cache": "false"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dedicated.Stop(); err != nil {
			t.Error(err)
		}
	})
	shared := cp
	cp = dedicated
	t.Cleanup(func() { cp = shared })
	for _, op := range operators {
		if err := op.install(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWatchesResumedAfterCompactionRelistAndMissNothing(t *testing.T) {
	size := sized()
	withUncachedWatches(t)
	s := startBehindProxy(t)
	for _, op := range operators {
		op.create(t, s.admin, s.ns, op.name+"-before", size.objects)
	}
	await(t, size.limit, func(ctx context.Context) error { return converged(ctx, s.admin, s.ns, operators...) })
	opened := s.watches.opened.Load()

	// The operators fall behind: their watches hear nothing while users change objects.
	s.proxy.Partition()
	for _, op := range operators {
		op.create(t, s.admin, s.ns, op.name+"-during", size.objects)
		op.resizeNamed(t, s.admin, s.ns, op.name+"-before-0")
		deleteNamed(t, s.admin, s.ns, op, op.name+"-before-1")
	}
	// Then etcd forgets the history they would resume from, and their connections break.
	revision, err := cp.CompactEtcd(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.proxy.CutAll()
	s.proxy.Heal()
	healed := time.Now()

	await(t, size.limit, func(ctx context.Context) error { return converged(ctx, s.admin, s.ns, operators...) })
	await(t, size.limit, func(ctx context.Context) error { return gone(ctx, s.admin, s.ns, "before-1") })
	converging := time.Since(healed)
	pods, recreated := s.created.checkDeleted(t, named("memcached-before-1", "podset-before-1", "at-before-1"))
	if s.watches.expired.Load() == 0 {
		t.Errorf("no watch was told its resource version was too old after compaction at revision %d: the scenario tried nothing", revision)
	}
	t.Logf("etcd compacted at revision %d behind the operators' backs: %d watches expired, %d opened after (%d before); all converged %v after, %d At pods created, %d children created again for an owner deleted meanwhile",
		revision, s.watches.expired.Load(), s.watches.opened.Load()-opened, opened, converging.Round(100*time.Millisecond), pods, recreated)
}
