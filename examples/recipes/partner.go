package recipes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
)

// PartnerResource is the resource of the pushes to the partner's API at host (such as
// "partner.example", or "partner.example:8443"): breakerhttp.NewTransport names a request after
// its method and its URL's host.
func PartnerResource(host string) string { return http.MethodPost + " " + host }

// PartnerRules returns the rules of the partner's API at host: the README's recommended rules,
// with a MaxAllowedRT for a service across the internet rather than next door.
//
// Pace, which the README recommends for every dependency, is what makes them right for a quota.
// Past the quota the partner refuses calls (429), and a refusal counts as a bad call in the
// ErrorRatio rule's window, so the window trips while calls still succeed: the breaker stays
// CLOSED and paces, offering the partner what it has shown it takes, and a refusal's
// Retry-After holds the calls back until the quota comes back. A refusal never counts toward
// the fast trip (FastBuckets), so a quota spent within a bucket or two does not look like an
// outage; a partner that is down (5xx, no connection) still trips it within two buckets.
func PartnerRules(host string) []breaker.Rule {
	resource := PartnerResource(host)
	return []breaker.Rule{
		{Resource: resource, Strategy: breaker.ErrorRatio, Threshold: 0.5,
			FastBuckets: 2, RetryTimeout: 5 * time.Second, RetryJitter: 0.2, RampUp: 20 * time.Second,
			Pace: true},
		{Resource: resource, Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: time.Second, FastBuckets: 2, RetryTimeout: 5 * time.Second,
			RetryJitter: 0.2, RampUp: 20 * time.Second, Pace: true},
	}
}

// PartnerSettings returns the settings of the partner's API: a Timeout that cuts off a push the
// partner does not answer, and at most a second's quota of pushes in flight, so that a partner
// that hangs holds at most that many goroutines.
func PartnerSettings(quotaPerSecond int) breaker.ResourceConfig {
	return breaker.ResourceConfig{Timeout: 3 * time.Second, MaxConcurrency: quotaPerSecond}
}

// NewPartnerClient returns a client whose requests are calls of m, sent through next (nil:
// http.DefaultTransport). NewTransport's defaults are what a quota needs: a 429, and a 503 with a
// Retry-After, count as refused (breaker.Refused), with the Retry-After as their hint; a
// transport error and any other 5xx fail. The resource's Timeout bounds each request, until its
// body is read or closed.
func NewPartnerClient(m *breaker.Manager, next http.RoundTripper) *http.Client {
	return &http.Client{Transport: breakerhttp.NewTransport(next, m)}
}

// ErrQuotaExceeded is what Partner.Push returns for an order the partner refused: a 429, or a
// 503 with a Retry-After. It carries the partner's Retry-After as a breaker.RetryAfter hint, so
// that Manager.RetryWait says when to push the order again.
var ErrQuotaExceeded = errors.New("recipes: the partner refused the order: quota exceeded")

// Partner pushes orders to a partner's API.
type Partner struct {
	client *http.Client
	base   *url.URL
}

// NewPartner returns a Partner that pushes orders with client (from NewPartnerClient) to the
// API at baseURL, such as "https://partner.example/v1".
func NewPartner(client *http.Client, baseURL string) (*Partner, error) {
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	return &Partner{client: client, base: base}, nil
}

// Push sends o to the partner. It returns nil when the partner took it; ErrQuotaExceeded when
// the partner refused it; a *breaker.BlockError (matching breaker.ErrBlocked) when a breaker held
// it back without sending it: ErrPacing while the breaker paces a spent quota, whose RetryAt
// says when to push it again; or the error the request ended with. Keep an order that was not
// pushed, and push it again after Manager.RetryWait(err).
func (p *Partner) Push(ctx context.Context, o Order) error {
	body := fmt.Sprintf(`{"id":%q,"amount":%d}`, o.ID, o.Amount)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base.JoinPath("orders").String(),
		strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body) // read to the end, so that the connection is kept
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	d, hinted := retryAfter(resp.Header.Get("Retry-After"))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable && hinted {
		err := fmt.Errorf("push order %s: %w (%s)", o.ID, ErrQuotaExceeded, resp.Status)
		if hinted {
			err = breaker.RetryAfter(err, d)
		}
		return err
	}
	return fmt.Errorf("push order %s: %s", o.ID, resp.Status)
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string) (time.Duration, bool) {
	if secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		if secs < 0 || secs > int64(math.MaxInt64/time.Second) {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}
