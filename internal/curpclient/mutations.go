package curpclient

// broken re-introduces, for mutation tests, a bug the client once had, so
// the checked simulation can show that it catches it. Only a build with
// the mutations tag can set it (package curp's Break); in every other
// build it stays false.
var broken struct {
	// anyTerm: a client counts witness oks from any term towards a
	// speculative reply's superquorum (a deposed leader's fast path).
	anyTerm bool
}
