package breaker

// Reset moves every breaker of resource to a fresh CLOSED period with an empty window, as if
// its rules had just been loaded, for an operator who knows the dependency is back. Observers
// hear Reason Reset from each breaker that was not CLOSED. A resource without rules is left as
// it is; its settings (Force) are not changed.
func (m *Manager) Reset(resource string) {
	res := m.existing(resource)
	if res == nil {
		return
	}
	now := m.now()
	for _, c := range res.breakers {
		c.reset(now)
	}
}
