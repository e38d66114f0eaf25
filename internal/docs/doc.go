// Package docs holds the tests that keep the README and docs/ true to the code: every
// identifier of the library they name in a code span resolves, every Go block compiles or is
// marked a fragment on purpose, every exported identifier of the library has godoc, and
// every package of the library has a runnable Example.
//
// Run them alone with `make docs` (go test ./internal/docs). A Go block that is deliberately
// not a whole program or package (an excerpt, a sketch, pseudo-code) is marked by the line
//
//	<!-- fragment: why -->
//
// right before its fence. Any other block is compiled: a block with a package clause as it
// stands; one of declarations under a package clause of its own; one of statements as the
// body of a function. The imports a wrapped block lacks are added for the library's packages
// and the usual aliases (ctrl, client, metav1, corev1, ...); what a block uses that its
// page declares elsewhere, or not at all, it gets from an HTML comment before its fence,
// whose lines are the comment's opening and closing alone:
//
//	<!-- go context
//	import controller "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
//	func _() error
//	type memcached struct{}
//	-->
//
// where an import line is hoisted above the block and a "func _() T" line is the signature
// of the function a block of statements is wrapped in.
// A block that shows a file of the checkout whole, as docs/adopting.md shows the adopted
// controller that test/adopt builds in a scaffolded project, is marked by the line
//
//	<!-- file: test/adopt/testdata/adopted/widget_controller.go -->
//
// right before its fence: it must be that file, byte for byte
// (TestBlocksShowingAFileAreThatFile), and builds where the file is used, not here.
// A variable a block declares and does not use is not an error. The library here is every
// package outside examples/, test/, cmd/, hack/ and internal/: those are programs and
// fixtures, not API a user imports, so their godoc is not checked.
package docs
