package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1alpha1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// WithWebhooks returns the declaration c (New's) with the Memcached's webhooks, for a
// manager that serves them: Default sets the defaults, ConfigMapCheck refuses a ConfigMap
// the controller could not see (reading ConfigMaps through configMaps), and v1alpha1 is
// converted to and from v1beta1. A manager made without them reconciles all the same; a
// v1alpha1 client then needs the CRD without its conversion webhook.
func WithWebhooks(c *reconcile.Controller[*cachev1beta1.Memcached], configMaps client.Reader) *reconcile.Controller[*cachev1beta1.Memcached] {
	return c.WithDefaulter(webhook.DefaulterFunc[*cachev1beta1.Memcached](Default)).
		WithValidator(ConfigMapCheck{Reader: configMaps}).
		WithConversion(cachev1alpha1.Spoke())
}

// Default sets the defaults of a Memcached's server that its CRD does not: the memory
// limit, which v1alpha1 has no field for, so that a Memcached created through v1alpha1 is
// defaulted all the same. The port's default is the CRD's, repeated here for an object
// that reaches the webhook without it.
func Default(_ context.Context, mc *cachev1beta1.Memcached) error {
	if mc.Spec.Server.Port == 0 {
		mc.Spec.Server.Port = cachev1beta1.DefaultPort
	}
	if mc.Spec.Server.MemoryLimitMiB == 0 {
		mc.Spec.Server.MemoryLimitMiB = cachev1beta1.DefaultMemoryLimitMiB
	}
	return nil
}

// ConfigMapCheck validates what a CRD's rules cannot: that the ConfigMap a Memcached
// names is one the controller sees. The manager caches only the ConfigMaps labelled
// ConfigMapLabel, so a Memcached naming one without the label would wait for it forever:
// it is refused, naming spec.server.configMapRef.name. A ConfigMap that does not exist
// yet is allowed, with a warning (it may be created next, by the same kubectl apply).
//
// It checks the reference when it is set or changed, not on every update: a ConfigMap that
// loses its label later does not block scaling the Memcached (the controller reports it
// Stalled).
type ConfigMapCheck struct {
	// Reader reads ConfigMaps, uncached: the manager's cache does not hold those without
	// the label.
	Reader client.Reader
}

var configMapRefName = field.NewPath("spec", "server", "configMapRef", "name")

// Validate checks mc's ConfigMap, unless old names the same one.
func (v ConfigMapCheck) Validate(ctx context.Context, mc, old *cachev1beta1.Memcached) ([]string, error) {
	name := configMapName(mc)
	if name == "" || (old != nil && configMapName(old) == name) {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	err := v.Reader.Get(ctx, client.ObjectKey{Namespace: mc.Namespace, Name: name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return []string{fmt.Sprintf("%s: ConfigMap %s/%s does not exist yet: the Memcached waits for it, which must carry the label %s",
			configMapRefName, mc.Namespace, name, ConfigMapLabel)}, nil
	case err != nil:
		return nil, apierrors.NewInternalError(fmt.Errorf("reading ConfigMap %s/%s: %w", mc.Namespace, name, err))
	}
	if _, ok := cm.Labels[ConfigMapLabel]; !ok {
		return nil, field.Invalid(configMapRefName, name,
			fmt.Sprintf("ConfigMap %s/%s lacks the label %s, without which the operator does not see it: label it, or name another", mc.Namespace, name, ConfigMapLabel))
	}
	return nil, nil
}
