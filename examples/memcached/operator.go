// Package memcached is the Memcached operator as a library: what cmd/main.go runs, importable by
// programs that run several operators in one process (the demo, the benchmark). Its
// controller lives in internal/controller, as kubebuilder lays it out.
package memcached

import (
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	cachev1alpha1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/internal/controller"
)

// AddToScheme adds the Memcached API to a scheme.
func AddToScheme(s *runtime.Scheme) error { return cachev1alpha1.AddToScheme(s) }

// Setup registers the Memcached controller with mgr.
func Setup(mgr ctrl.Manager) error { return controller.Setup(mgr) }

// Image is the container image the operator's pods run.
const Image = controller.Image

// Concurrency is how many objects the operator reconciles at a time by default.
const Concurrency = controller.Concurrency
