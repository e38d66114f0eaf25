package reconcile

// RequestedAtAnnotation asks for a reconcile now, by Flux's convention: set it to a new
// value (the time, say), and the object is reconciled at once and its status records the
// value once a reconcile has handled it (see WithReconcileRequests).
const RequestedAtAnnotation = "reconcile.fluxcd.io/requestedAt"

// RequestStatus is implemented by objects whose status records the last reconcile request
// handled, Flux's status.lastHandledReconcileAt, for WithReconcileRequests.
type RequestStatus interface {
	GetLastHandledReconcileAt() string
	SetLastHandledReconcileAt(string)
}

// WithReconcileRequests makes the controller answer requests for a reconcile now, made by
// setting annotation (RequestedAtAnnotation when "") to a new value:
//
//	kubectl annotate --overwrite memcached/cache reconcile.fluxcd.io/requestedAt="$(date +%s)"
//	kubectl wait --for=jsonpath='{.status.lastHandledReconcileAt}'=<that value> memcached/cache
//
// The change of the annotation is itself the trigger: a watch event, which reconciles the
// object at once however long its last outcome said to wait. The shell records the value in
// the status once the logic has handled it, with success or a terminal error, as it records
// observedGeneration; an error being retried does not record it. A paused or suspended
// object records nothing: it runs nothing. The reconciled kind must implement
// RequestStatus; the declaration is refused otherwise.
func WithReconcileRequests(annotation string) Option {
	if annotation == "" {
		annotation = RequestedAtAnnotation
	}
	return func(o *options) { o.requestAnnotation = annotation }
}

// handled records in obj's status the reconcile request its annotation holds, if any.
func (r *shell[T]) handled(obj T) {
	if r.options.requestAnnotation == "" {
		return
	}
	if s, ok := any(obj).(RequestStatus); ok {
		if v, asked := obj.GetAnnotations()[r.options.requestAnnotation]; asked {
			s.SetLastHandledReconcileAt(v)
		}
	}
}
