// Package doccheck holds no code, only tests that keep the documentation
// true to the tree it describes: every relative link and image in
// README.md and docs/ resolves, a link to a heading finds that heading, and
// the README's two opening commands are the benchmark's defaults and the
// test command CI runs.
//
// Documentation moves more often than code and nothing else notices when a
// link breaks or a command drifts from what CI runs, so the test suite
// checks it like any other contract.
package doccheck
