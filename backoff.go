package breaker

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
)

// defaultInstance is the host name and the process id.
func defaultInstance() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid())
}

// jitterSeed hashes the instance name and the rule's identity, the parts of the jitter that do
// not change while the breaker lives.
func jitterSeed(instance string, r *Rule) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%+v", instance, r.identity())
	return h.Sum64()
}

// openTime is how long the breaker stays OPEN after failures probes failed in a row (0 on a
// trip), for the OPEN period of generation gen: RetryTimeout doubled for each failure, up to
// MaxRetryTimeout, shortened by a fraction in [0, RetryJitter).
func (c *circuit) openTime(t *tuning, failures uint32, gen uint64) int64 {
	d := t.retryTimeout
	for range min(failures, 63) {
		if d >= t.maxRetry/2 {
			d = t.maxRetry
			break
		}
		d *= 2
	}
	d = min(d, t.maxRetry)
	if t.jitter > 0 {
		d -= int64(float64(d) * t.jitter * unitHash(t.jitterSeed^gen))
	}
	return max(d, 1)
}

// unitHash maps x to [0, 1), evenly for nearby x (the finaliser of SplitMix64).
func unitHash(x uint64) float64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}
