package reconcile

// ReadyCheck is readyCheck, for a test of package reconcile_test: there it runs against
// the control plane that TestMain starts for the package, rather than a second one.
var ReadyCheck = readyCheck
