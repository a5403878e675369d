// Package meta holds repository-wide tests about the source tree itself,
// not about any one package's behaviour: every package carries a package
// doc comment, and no non-test Go file grows past MaxLines (split files by
// concern instead). It has no code of its own; see meta_test.go.
package meta

// MaxLines is the most lines a non-test Go file may have.
const MaxLines = 800
