package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, math.Inf(1), math.Inf(1)}, math.Inf(1)},
		{[]float64{1, 2, math.Inf(1), math.Inf(1)}, math.Inf(1)},
	}
	for _, c := range cases {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if !math.IsNaN(median([]float64{1, math.NaN()})) || !math.IsNaN(median(nil)) {
		t.Error("median of a measure that does not apply should be NaN")
	}
}

func TestRewriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte("intro\n"+beginMark+"\nold\n"+endMark+"\noutro\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewriteSection(path, "new\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "intro\n" + beginMark + "\n\nnew\n" + endMark + "\noutro\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
