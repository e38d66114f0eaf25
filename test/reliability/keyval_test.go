package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	keyvalv1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
)

// TestKeyvalSurvivesCrashesAtAnyMomentAndDeletesWhatItSays runs the Keyval operator through
// lives that each end in a crash after a random number of accepted writes, each life
// bringing new Keyvals and new sizes and configurations for some, then one clean life:
// every Keyval converges with its claims bound, and no status goes backwards. Then every
// Keyval is deleted, again through crashing lives: each goes, the volumes of those that
// say Delete first, and those that say Retain keep theirs.
func TestKeyvalSurvivesCrashesAtAnyMomentAndDeletesWhatItSays(t *testing.T) {
	s := sized()
	op := keyvalOperator
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	seed := rand.Uint64()
	random := rand.New(rand.NewPCG(seed, seed))
	t.Logf("crash moments drawn with seed %d", seed)
	watchStatus(t, ns, op)
	cfg := op.config(t)

	// lives runs the operator through s.crashes lives, each after work, ending in a crash
	// once the plug is pulled (or, done first, as if it were), then one clean life until
	// done, which it stops.
	lives := func(work func(life int), done func(ctx context.Context) error) (crashes int) {
		for life := range s.crashes {
			work(life)
			p := &plug{trigger: afterWrites(1 + random.IntN(8))}
			m := op.start(t, p.wrap(cfg), ns)
			await(t, s.limit, func(ctx context.Context) error {
				if p.isPulled() {
					return nil
				}
				return done(ctx)
			})
			if p.isPulled() {
				crashes++
			}
			p.pull()
			m.Stop()
		}
		clean := op.start(t, cfg, ns)
		await(t, s.limit, done)
		clean.Stop()
		return crashes
	}

	batch := max(1, s.objects/s.crashes)
	crashes := lives(func(life int) {
		op.create(t, admin, ns, fmt.Sprintf("keyval-%d", life), batch)
		if life > 0 {
			op.resizeNamed(t, admin, ns, fmt.Sprintf("keyval-%d-0", life-1))
		}
	}, func(ctx context.Context) error { return converged(ctx, admin, ns, op) })
	t.Logf("%d lives, %d of them ended by a crash in the middle of their work; %d Keyvals converged", s.crashes, crashes, batch*s.crashes)

	var list keyvalv1alpha1.KeyvalList
	if err := admin.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{} // the instances whose claims stay
	for _, kv := range list.Items {
		keep[kv.Name] = kv.Spec.Storage.WhenDeleted == keyvalv1alpha1.Retain
	}
	// The deletions, before the first crashing life: its finalizer holds each Keyval.
	crashes = lives(func(life int) {
		if life > 0 {
			return
		}
		for _, kv := range list.Items {
			if err := admin.Delete(t.Context(), &kv); err != nil {
				t.Fatal(err)
			}
		}
	}, func(ctx context.Context) error {
		var left keyvalv1alpha1.KeyvalList
		if err := admin.List(ctx, &left, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(left.Items) > 0 {
			return fmt.Errorf("%d Keyvals are still there, among them %s", len(left.Items), left.Items[0].Name)
		}
		return nil
	})

	var claims corev1.PersistentVolumeClaimList
	if err := admin.List(t.Context(), &claims, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, c := range claims.Items {
		instance := c.Labels["app.kubernetes.io/instance"]
		if !keep[instance] {
			t.Errorf("claim %s of Keyval %s, which said Delete, is left after it", c.Name, instance)
		}
		if keep[instance] {
			kept++
		}
	}
	t.Logf("%d Keyvals deleted through %d lives, %d ended by a crash; %d claims of those that said Retain kept", len(list.Items), s.crashes, crashes, kept)
}
