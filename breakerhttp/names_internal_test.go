package breakerhttp

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Given more patterns than a serverNames keeps, then each is still named ServerPrefix and the
// pattern, and the names kept stop at the bound.
func TestServerNamesBounded(t *testing.T) {
	var s serverNames
	for i := range maxServerNames + 100 {
		p := "GET /p/" + strconv.Itoa(i)
		assert.Equal(t, ServerPrefix+p, s.of(p).name)
		assert.Equal(t, ServerPrefix+p, s.of(p).name, "the second time")
	}
	assert.Len(t, *s.names.Load(), maxServerNames)
}
