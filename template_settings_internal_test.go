package breaker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countsHeld is how many names the Manager keeps a count of calls in flight for.
func (m *Manager) countsHeld() int {
	m.counts.mu.Lock()
	defer m.counts.mu.Unlock()
	return len(m.counts.m)
}

// Names that callers choose, dropped from the template entries while their calls were still in
// flight, keep their counts only until those calls exit: round after round of them does not
// grow what the Manager keeps.
func TestTemplateSettingsCountsBounded(t *testing.T) {
	const limit = 2
	m := NewManager(WithMaxTemplateBreakers(limit))
	require.NoError(t, m.LoadResources(map[string]ResourceConfig{"h/*": {MaxConcurrency: 1}}))
	next := 0
	name := func() string { next++; return fmt.Sprint("h/", next) }
	for range 20 {
		var held []*Entry
		for range 10 { // more names with a call in flight than the bound holds: some must go
			e, err := m.Enter(name())
			require.NoError(t, err)
			held = append(held, e)
		}
		for _, e := range held {
			e.Exit()
		}
	}
	e, err := m.Enter(name()) // one more name, which makes room
	require.NoError(t, err)
	e.Exit()
	assert.LessOrEqual(t, m.countsHeld(), limit+1, "the names held and the one that made room")
	assert.Equal(t, limit, m.TemplateStats().Resources)
}
