// Package inlinecheck lets a test hold the promise of a comment that calls a function small
// enough to inline: it asks the compiler (go build -gcflags=-m, whose report the build cache
// keeps) whether it inlines the function, so that a change that makes it too large fails a
// test rather than slowing every call unseen.
package inlinecheck

import (
	"os/exec"
	"regexp"
	"testing"
)

// Inlined fails t unless the compiler can inline each of funcs in the package in the current
// directory. Each is named as the compiler names it: "(*Flight).TryEnter", "(*Manager).Do".
func Inlined(t testing.TB, funcs ...string) {
	t.Helper()
	out, err := exec.Command("go", "build", "-gcflags=-m", "-o", "/dev/null", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, f := range funcs {
		if !regexp.MustCompile(`(?m): can inline ` + regexp.QuoteMeta(f) + `( |$)`).Match(out) {
			t.Errorf("%s is no longer inlined; shorten it, or drop the comment that promises it", f)
		}
	}
}
