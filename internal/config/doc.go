// Package config is the YAML description of a hybridkv deployment and of the
// benchmark run against it: which protocol, where the replicas and clients
// sit, the emulated wide-area delays, protocol timing and the workload.
//
// One Config value is shared by every process of a run. The launcher parses a
// file once, validates it, and hands the children the same Config re-encoded
// with [Config.YAML], so all processes agree on every parameter, defaults
// included, even if defaults change between builds.
//
// Every field has a default ([Default]); a file only needs to name what it
// changes. Unknown fields are errors, because a misspelt key silently keeping
// its default would make a benchmark measure something other than intended.
// Validation reports every bad field at once, each prefixed with its path in
// the file (for example "replicas[1].addr: missing").
package config
