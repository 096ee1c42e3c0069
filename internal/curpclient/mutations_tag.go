//go:build mutations

package curpclient

// BreakAnyTerm re-introduces the any-term bug until Repair.
func BreakAnyTerm() { broken.anyTerm = true }

// Repair undoes BreakAnyTerm.
func Repair() { broken.anyTerm = false }
