package breakerview_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker/breakerview"
)

// Runs of digits compare as numbers, the rest byte by byte, and names equal that way still
// have an order.
func TestCompareNames(t *testing.T) {
	tests := []struct {
		give []string
		want []string
	}{
		{give: []string{"shard-10", "shard-2", "shard-1"}, want: []string{"shard-1", "shard-2", "shard-10"}},
		{give: []string{"b", "a10", "a9", "a"}, want: []string{"a", "a9", "a10", "b"}},
		{give: []string{"host-2.pod-10", "host-2.pod-9", "host-10.pod-1"},
			want: []string{"host-2.pod-9", "host-2.pod-10", "host-10.pod-1"}},
		{give: []string{"a1", "a01", "a001"}, want: []string{"a001", "a01", "a1"}}, // equal as numbers: as strings
		{give: []string{"v99999999999999999999999", "v100000000000000000000000"},
			want: []string{"v99999999999999999999999", "v100000000000000000000000"}}, // past uint64
		{give: []string{"x-1", "x1", "x"}, want: []string{"x", "x-1", "x1"}},
		{give: []string{"GET /b", "GET /a/2", "GET /a/10"}, want: []string{"GET /a/2", "GET /a/10", "GET /b"}},
	}
	for _, tt := range tests {
		got := slices.Clone(tt.give)
		slices.SortFunc(got, breakerview.CompareNames)
		assert.Equal(t, tt.want, got, "%q", tt.give)
		for _, a := range tt.give {
			assert.Zero(t, breakerview.CompareNames(a, a), a)
			for _, b := range tt.give {
				assert.Equal(t, breakerview.CompareNames(a, b), -breakerview.CompareNames(b, a), "%q %q", a, b)
			}
		}
	}
}
