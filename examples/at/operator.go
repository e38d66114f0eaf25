// Package at is the At operator as a library: what cmd/main.go runs, importable by
// programs that run several operators in one process (the demo, the benchmark). Its
// controller lives in internal/controller, as kubebuilder lays it out.
package at

import (
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/at/internal/controller"
)

// AddToScheme adds the At API to a scheme.
func AddToScheme(s *runtime.Scheme) error { return cnatv1alpha1.AddToScheme(s) }

// Setup registers the At controller with mgr.
func Setup(mgr ctrl.Manager) error { return controller.Setup(mgr) }

// CacheOptions restricts a manager's pod cache to the operator's own pods. A manager that
// runs the operator must use it, or the operator's pods are cached cluster-wide.
func CacheOptions(o *cache.Options) { controller.CacheOptions(o) }

// Succeeded is the condition type that records how an At's command ended.
const Succeeded = controller.Succeeded

// Image is the container image the operator's pods run.
const Image = controller.Image

// Concurrency is how many objects the operator reconciles at a time by default.
const Concurrency = controller.Concurrency
