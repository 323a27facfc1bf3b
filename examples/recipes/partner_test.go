package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/examples/recipes"
)

// quotaPerSecond is the partner's quota: the orders it takes in each second of the fake clock.
const quotaPerSecond = 50

// quotaPartner is a partner's API on a loopback server that takes quotaPerSecond orders in each
// second of the Manager's fake clock and answers the others 429 with Retry-After: 1, while its
// quota is on.
type quotaPartner struct {
	*httptest.Server
	clock *breakertest.Clock

	mu      sync.Mutex
	quota   bool
	taken   map[int64]int // orders taken, by second of the clock
	refused int           // 429s answered
}

func newQuotaPartner(t *testing.T, clock *breakertest.Clock) *quotaPartner {
	t.Helper()
	p := &quotaPartner{clock: clock, quota: true, taken: map[int64]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *quotaPartner) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	second := p.clock.Now().Unix()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quota && p.taken[second] >= quotaPerSecond {
		p.refused++
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	p.taken[second]++
	w.WriteHeader(http.StatusCreated)
}

func (p *quotaPartner) host(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(p.URL)
	require.NoError(t, err)
	return u.Host
}

func (p *quotaPartner) lift() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quota = false
}

func (p *quotaPartner) refusals() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// second is what the service saw in one second of the fake clock.
type second struct {
	pushed, refused, failed int // sent: taken, refused, failed
	paced, opened           int // held back: by pacing, by an open breaker (or another cause)
}

func (s second) String() string {
	return fmt.Sprintf("pushed %3d, refused %3d, failed %d, held back %3d by pacing and %d otherwise",
		s.pushed, s.refused, s.failed, s.paced, s.opened)
}

// calls is a call observer that tallies every call by second and outcome.
type calls struct {
	mu       sync.Mutex
	bySecond map[int64]*second
}

func (c *calls) hear(info breaker.CallInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := int64(info.At.Sub(breakertest.Start) / time.Second)
	s := c.bySecond[at]
	if s == nil {
		s = &second{}
		c.bySecond[at] = s
	}
	switch {
	case info.Blocked != nil && info.Blocked.Kind() == breaker.BlockedByPacing:
		s.paced++
	case info.Blocked != nil:
		s.opened++
	case info.Outcome == breaker.Success:
		s.pushed++
	case info.Outcome == breaker.Refused:
		s.refused++
	default:
		s.failed++
	}
}

func (c *calls) at(sec int64) second {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.bySecond[sec]; s != nil {
		return *s
	}
	return second{}
}

// newPartner returns a Partner for the loopback partner p, with the recipe's rules and settings
// on a Manager on p's clock, and the calls the Manager heard.
func newPartner(t *testing.T, p *quotaPartner) (*recipes.Partner, *breaker.Manager, *calls) {
	t.Helper()
	heard := &calls{bySecond: map[int64]*second{}}
	host := p.host(t)
	m := breaker.NewManager(breaker.WithClock(p.clock), breaker.WithCallObserver(heard.hear))
	require.NoError(t, m.LoadRules(recipes.PartnerRules(host)))
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		recipes.PartnerResource(host): recipes.PartnerSettings(quotaPerSecond)}))
	client := recipes.NewPartnerClient(m, p.Client().Transport)
	t.Cleanup(client.CloseIdleConnections)
	partner, err := recipes.NewPartner(client, p.URL+"/v1")
	require.NoError(t, err)
	return partner, m, heard
}

// Given a partner past its quota, then each 429 it answers reaches the caller as
// ErrQuotaExceeded with the partner's Retry-After for RetryWait, and the breaker counts it as
// refused, not failed.
func TestPartnerRefusalIsCounted(t *testing.T) {
	clock := breakertest.NewClock()
	p := newQuotaPartner(t, clock)
	partner, m, heard := newPartner(t, p)
	ctx := context.Background()

	for i := range quotaPerSecond + 3 {
		err := partner.Push(ctx, recipes.Order{ID: fmt.Sprint("o-", i), Amount: 1250})
		if i < quotaPerSecond {
			require.NoError(t, err, "push %d is within the quota", i)
			continue
		}
		require.ErrorIs(t, err, recipes.ErrQuotaExceeded)
		wait, retry := m.RetryWait(err)
		assert.True(t, retry)
		assert.Equal(t, time.Second, wait, "the partner's Retry-After")
	}
	assert.Equal(t, second{pushed: quotaPerSecond, refused: 3}, heard.at(0))
	assert.Equal(t, 3, p.refusals())
	st := m.Breakers(recipes.PartnerResource(p.host(t)))[0].Stats()
	assert.Equal(t, uint64(3), st.Bad, "a refusal is a bad call of the ErrorRatio window")
}

// Given pushes at four times the partner's quota for five seconds, then the quota lifted, then
// the breaker paces and never opens: each second's quota is taken whole, pacing holds back most
// of the others without sending them, every 429 counts as refused, and once the quota is
// lifted every push goes through again.
func TestPartnerQuotaPacesAndNeverOpens(t *testing.T) {
	clock := breakertest.NewClock()
	p := newQuotaPartner(t, clock)
	partner, m, heard := newPartner(t, p)
	resource := recipes.PartnerResource(p.host(t))
	var opened []breaker.StateChange
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		if c.To == breaker.Open {
			opened = append(opened, c)
		}
	}))
	ctx := context.Background()
	const (
		quotaSeconds = 5
		liftedFor    = 4
		every        = 5 * time.Millisecond // 200 pushes a second: four times the quota
	)

	var unexpected []error // a push that ended otherwise than pushed, refused or held back
	pastRetryAt := 0       // pushes held back with a RetryAt not ahead of them
	push := func(i int) {
		err := partner.Push(ctx, recipes.Order{ID: fmt.Sprint("o-", i), Amount: 1250})
		var blocked *breaker.BlockError
		switch {
		case err == nil, errors.Is(err, recipes.ErrQuotaExceeded):
		case errors.As(err, &blocked):
			if !blocked.RetryAt.After(clock.Now()) {
				pastRetryAt++
			}
		default:
			unexpected = append(unexpected, err)
		}
		clock.Advance(every)
	}
	i := 0
	for ; clock.Now().Before(breakertest.Start.Add(quotaSeconds * time.Second)); i++ {
		push(i)
	}
	st := m.Breakers(resource)[0].Stats()
	assert.NotZero(t, st.Refused, "the window holds refusals")
	assert.Equal(t, st.Bad, st.Refused, "every bad call of the window was refused: none failed")

	p.lift()
	for ; clock.Now().Before(breakertest.Start.Add((quotaSeconds + liftedFor) * time.Second)); i++ {
		push(i)
	}

	refused := 0
	for s := range int64(quotaSeconds + liftedFor) {
		got := heard.at(s)
		t.Logf("second %d: %v", s, got)
		refused += got.refused
		assert.Zero(t, got.failed, "second %d: a refusal is not a failure", s)
		assert.Zero(t, got.opened, "second %d: nothing but pacing held a push back", s)
		if s < quotaSeconds {
			assert.Equal(t, quotaPerSecond, got.pushed, "second %d: the quota is taken whole", s)
			if s > 0 { // the first second sends until the window sees the quota
				assert.Less(t, got.refused+got.pushed, int(time.Second/every)/2, "second %d: most pushes are not sent", s)
			}
		}
	}
	assert.Empty(t, unexpected)
	assert.Zero(t, pastRetryAt, "a push held back is told when to come back")
	assert.Equal(t, p.refusals(), refused, "each 429 counted as refused")
	assert.Empty(t, opened, "a quota alone never opens the breaker")
	paced := 0
	for s := range int64(quotaSeconds) {
		paced += heard.at(s).paced
	}
	assert.NotZero(t, paced, "pacing kept pushes the quota could not take from the partner")

	last := heard.at(quotaSeconds + liftedFor - 1)
	assert.Equal(t, second{pushed: int(time.Second / every)}, last, "the quota lifted, every push goes through")
	for _, b := range m.Breakers(resource) {
		assert.False(t, b.Stats().Pacing, "%v paces no more", b.Rule().Strategy)
	}
}
