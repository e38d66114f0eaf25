// Package webhook holds what an operator declares of its admission webhooks and API
// versions, and the certificate it serves them with.
//
// A controller's declaration (reconcile.For) takes the webhooks of its kind:
// reconcile.WithDefaulter takes a Defaulter, reconcile.WithValidator a Validator (whose
// warnings reach the client), and reconcile.WithConversion the spokes of a hub, each
// converting to and from the hub (controller-runtime's conversion.NewSpokeConverter).
// reconcile.Manager.New registers them on the manager's webhook server at the paths
// controller-gen's markers name (Endpoint), so that the manifests kubebuilder generates
// match.
//
// Keep and Restore make a conversion lossless: a field of the hub that a spoke has no
// room for is kept in an annotation of the spoke and restored when the spoke is converted
// back, as cluster-api's util/conversion does.
//
// Certificates makes and rotates the serving certificate and its authority without
// cert-manager, and puts the authority into the operator's webhook configurations and
// CRDs. docs/webhooks.md tells the whole story.
package webhook
