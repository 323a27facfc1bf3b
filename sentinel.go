package breaker

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/halfopen/breaker/internal/strictjson"
)

// ParseSentinelRules converts a JSON array of Alibaba Sentinel circuit-breaking ("degrade")
// rules to Rules that trip on the same call as Sentinel's. The array may mix Sentinel for Java's
// DegradeRule (1.8 and later), told by its "grade", and sentinel-golang's circuitbreaker.Rule
// (v1.0.x), told by its "strategy" (Java's defaults in parentheses):
//
//	Java                      Go                             Rule
//	resource                  resource                       Resource
//	id (a number)             id                             ID
//	grade 0, 1, 2             strategy 0, 1, 2               SlowRequestRatio, ErrorRatio, ErrorCount
//	count (grade 0), in ms    maxAllowedRtMs (strategy 0)    MaxAllowedRT
//	slowRatioThreshold (1.0)  threshold                      Threshold for SlowRequestRatio
//	count                     threshold                      Threshold for ErrorRatio
//	floor(count) + 1          threshold, truncated           Threshold for ErrorCount
//	timeWindow, in s          retryTimeoutMs                 RetryTimeout
//	minRequestAmount (5)      minRequestAmount (0 → 1)       MinRequestAmount
//	statIntervalMs (1000)     statIntervalMs                 StatInterval
//	                          statSlidingWindowBucketCount   BucketCount (Java: 1; Go: 0 → 1)
//
// The differences are deliberate. Java opens an error-count breaker when the errors exceed
// count, a Rule when they reach its Threshold: hence the +1, and count 5 opens on the 6th
// error. Java counts in a window of one bucket: hence BucketCount 1, not the default 10 (and
// sentinel-golang, like Java, takes 1 for a bucket count that does not divide the interval).
// MinRequestAmount is always written explicitly, never 0, so that what a Rule's 0 means (the
// default, or for ErrorCount no more calls than Threshold) does not change when a converted
// rule trips: Java's default, for a minRequestAmount left out, is 5 (DegradeRule's
// DEGRADE_DEFAULT_MIN_REQUEST_AMOUNT; Java refuses 0); sentinel-golang has no default and
// compares "total < minRequestAmount", so its 0 lets the first call trip, as 1 does here. A Java count for grade 0 is rounded to whole milliseconds, as Java does.
// One difference remains: Java opens a ratio breaker when the ratio exceeds its threshold (a
// slow-call ratio of 1.0 aside), a Rule, like sentinel-golang, when the ratio reaches it, so a
// Java error ratio of 0.5 opens at 5 errors in 10 calls here and at 6 in Java.
//
// sentinel-golang's probeNum becomes ProbeNum: that many good probes close the breaker. Where
// sentinel-golang lets probeNum calls through at once while HALF_OPEN, a Rule lets one through
// at a time, the next only after the one before succeeded, so a dependency that is half back
// gets one call at a time. Every other field Sentinel writes (limitApp, clusterMode,
// clusterConfig, app, ...) is ignored, so that rule files migrate unchanged. The fields above
// must be spelled exactly: a key that matches one only when case is ignored ("timewindow") is
// an error, not taken for it as encoding/json would, and so is a key written twice in one rule.
//
// A rule Sentinel itself refuses is an error (an unknown grade or strategy, a negative
// timeWindow or count, a Java minRequestAmount or statIntervalMs <= 0, a sentinel-golang
// statIntervalMs of 0), and so is an object with neither "grade" nor "strategy", or both, and a
// rule that converts to a Rule that Validate refuses (timeWindow 0, a ratio threshold of 0, a
// slow-call RT of 0 ms), whose error names the Sentinel field it came from. Each is a
// *RuleError (wrapping ErrInvalidRule) whose Index is the rule's position in the array. Input
// that is not a JSON array is an error that does not wrap ErrInvalidRule. JSON null and [] give
// an empty slice. Rules are checked one by one: two identical rules are kept, and
// Manager.LoadRules refuses them.
func ParseSentinelRules(data []byte) ([]Rule, error) {
	raws, err := strictjson.SplitArray(data, "Sentinel rules")
	if err != nil {
		return nil, err
	}
	rules := make([]Rule, 0, len(raws))
	for i, raw := range raws {
		r, err := convertSentinelRule(raw)
		if err != nil {
			return nil, atIndex(err, i)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// sentinelForm is what tells the two forms apart. A field set to null counts as left out.
type sentinelForm struct {
	Resource string          `json:"resource"`
	Grade    json.RawMessage `json:"grade"`
	Strategy json.RawMessage `json:"strategy"`
}

// javaDegradeRule is the JSON of Sentinel for Java's DegradeRule (1.8), with Java's types:
// int fields are int32. Pointers tell a field left out, which takes Java's default.
type javaDegradeRule struct {
	ID                 json.RawMessage `json:"id"` // a Long in Java
	Resource           string          `json:"resource"`
	Grade              int32           `json:"grade"`
	Count              float64         `json:"count"`
	TimeWindow         int32           `json:"timeWindow"`
	MinRequestAmount   *int32          `json:"minRequestAmount"`
	SlowRatioThreshold *float64        `json:"slowRatioThreshold"`
	StatIntervalMs     *int32          `json:"statIntervalMs"`
}

// goCircuitBreakerRule is the JSON of sentinel-golang's circuitbreaker.Rule (v1.0.x), with its
// types.
type goCircuitBreakerRule struct {
	ID                           string  `json:"id"`
	Resource                     string  `json:"resource"`
	Strategy                     uint32  `json:"strategy"`
	RetryTimeoutMs               uint32  `json:"retryTimeoutMs"`
	MinRequestAmount             uint64  `json:"minRequestAmount"`
	StatIntervalMs               uint32  `json:"statIntervalMs"`
	StatSlidingWindowBucketCount uint32  `json:"statSlidingWindowBucketCount"`
	MaxAllowedRtMs               uint64  `json:"maxAllowedRtMs"`
	Threshold                    float64 `json:"threshold"`
	ProbeNum                     uint64  `json:"probeNum"`
}

// The keys of the two forms, and those that tell them apart. A key that matches one of them only
// when case is ignored is refused, where encoding/json would take it; other keys are ignored.
var (
	sentinelFormKeys = strictjson.Keys(reflect.TypeFor[sentinelForm]())
	javaKeys         = strictjson.Keys(reflect.TypeFor[javaDegradeRule]())
	goKeys           = strictjson.Keys(reflect.TypeFor[goCircuitBreakerRule]())
)

// javaWants and goWants describe, for errors, what the fields of the two forms hold.
var (
	javaWants = map[string]string{
		"grade":            "0, 1 or 2",
		"timeWindow":       "a whole number in [0, 2147483647]",
		"minRequestAmount": "a whole number in [1, 2147483647]",
		"statIntervalMs":   "a whole number in [1, 2147483647]",
	}
	goWants = map[string]string{
		"strategy": "0 (SlowRequestRatio), 1 (ErrorRatio) or 2 (ErrorCount)",
	}
)

// maxMillis is the most milliseconds a time.Duration holds.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// convertSentinelRule converts one rule of either form and validates the result. Errors have
// Index -1.
func convertSentinelRule(raw []byte) (Rule, error) {
	var form sentinelForm
	if strictjson.IsNull(raw) {
		return Rule{}, &RuleError{Index: -1, Reason: "must be a JSON object, got null"}
	}
	keys := strictjson.ObjectKeys(raw, "resource")
	if err := checkKeys(keys, sentinelFormKeys); err != nil {
		return Rule{}, err
	}
	if err := json.Unmarshal(raw, &form); err != nil {
		return Rule{}, decodeError(err, raw, "Sentinel rule", form.Resource, nil)
	}
	java, golang := !isAbsent(form.Grade), !isAbsent(form.Strategy)
	switch {
	case java && golang:
		return Rule{}, &RuleError{Index: -1, Resource: form.Resource,
			Reason: `has both "grade" (Sentinel for Java) and "strategy" (sentinel-golang): keep the one its form has`}
	case !java && !golang:
		return Rule{}, &RuleError{Index: -1, Resource: form.Resource,
			Reason: `has neither "grade" (Sentinel for Java) nor "strategy" (sentinel-golang): cannot tell its form`}
	}

	var r Rule
	var from map[string]string // Rule field → the Sentinel field and value it came from
	var err error
	if java {
		if err := checkKeys(keys, javaKeys); err != nil {
			return Rule{}, err
		}
		var j javaDegradeRule
		if err := json.Unmarshal(raw, &j); err != nil {
			return Rule{}, decodeError(err, raw, "Sentinel rule", j.Resource, javaWants)
		}
		r, from, err = j.convert()
	} else {
		if err := checkKeys(keys, goKeys); err != nil {
			return Rule{}, err
		}
		var g goCircuitBreakerRule
		if err := json.Unmarshal(raw, &g); err != nil {
			return Rule{}, decodeError(err, raw, "Sentinel rule", g.Resource, goWants)
		}
		r, from, err = g.convert()
	}
	if err != nil {
		return Rule{}, err
	}
	if err := r.Validate(); err != nil {
		if re, ok := err.(*RuleError); ok {
			if src, ok := from[re.Field]; ok {
				at := *re
				at.Reason += " (from Sentinel's " + src + ")"
				return Rule{}, &at
			}
		}
		return Rule{}, err
	}
	return r, nil
}

// sentinelSource names a Sentinel field and its value, for errors.
func sentinelSource(field string, value any) string { return fmt.Sprintf("%q: %v", field, value) }

func isAbsent(raw json.RawMessage) bool { return raw == nil || strictjson.IsNull(raw) }

func (j *javaDegradeRule) convert() (Rule, map[string]string, error) {
	invalid := func(field, reason string) error {
		return &RuleError{Index: -1, Resource: j.Resource, Field: field, Reason: reason}
	}
	if j.Count < 0 {
		return Rule{}, nil, invalid("count", fmt.Sprintf("must not be negative, got %v", j.Count))
	}
	if j.TimeWindow < 0 {
		return Rule{}, nil, invalid("timeWindow", fmt.Sprintf("must not be negative, got %d", j.TimeWindow))
	}
	minRequests, interval := int32(5), int32(1000) // DegradeRule's defaults
	if j.MinRequestAmount != nil {
		if minRequests = *j.MinRequestAmount; minRequests <= 0 {
			return Rule{}, nil, invalid("minRequestAmount", fmt.Sprintf("must be > 0, got %d", minRequests))
		}
	}
	if j.StatIntervalMs != nil {
		if interval = *j.StatIntervalMs; interval <= 0 {
			return Rule{}, nil, invalid("statIntervalMs", fmt.Sprintf("must be > 0, got %d", interval))
		}
	}
	r := Rule{
		ID:               javaID(j.ID),
		Resource:         j.Resource,
		RetryTimeout:     time.Duration(j.TimeWindow) * time.Second,
		MinRequestAmount: uint64(minRequests),
		StatInterval:     time.Duration(interval) * time.Millisecond,
		BucketCount:      1,
	}
	from := map[string]string{"RetryTimeout": sentinelSource("timeWindow", j.TimeWindow),
		"StatInterval": sentinelSource("statIntervalMs", interval)}
	switch j.Grade {
	case 0:
		// ResponseTimeCircuitBreaker: maxAllowedRt = Math.round(count); slow when rt > it.
		ms := math.Floor(j.Count + 0.5)
		if ms > float64(maxMillis) {
			return Rule{}, nil, invalid("count",
				fmt.Sprintf("must be at most %d (ms) for grade 0, got %v", maxMillis, j.Count))
		}
		r.Strategy, r.MaxAllowedRT, r.Threshold = SlowRequestRatio, time.Duration(ms)*time.Millisecond, 1.0
		if j.SlowRatioThreshold != nil {
			r.Threshold = *j.SlowRatioThreshold
		}
		from["MaxAllowedRT"] = sentinelSource("count", j.Count)
		from["Threshold"] = sentinelSource("slowRatioThreshold", r.Threshold)
	case 1:
		r.Strategy, r.Threshold = ErrorRatio, j.Count
		from["Threshold"] = sentinelSource("count", j.Count)
	case 2:
		// ExceptionCircuitBreaker opens when errors > count, a Rule when errors >= Threshold.
		r.Strategy, r.Threshold = ErrorCount, math.Floor(j.Count)+1
		from["Threshold"] = sentinelSource("count", j.Count)
	default:
		return Rule{}, nil, invalid("grade", fmt.Sprintf(
			"must be 0 (slow call ratio), 1 (error ratio) or 2 (error count), got %d", j.Grade))
	}
	return r, from, nil
}

// javaID is the text of a Java rule's id (a Long): the number as written, bare or in a string.
// Anything else gives no ID.
func javaID(raw json.RawMessage) string {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func (g *goCircuitBreakerRule) convert() (Rule, map[string]string, error) {
	invalid := func(field, reason string) error {
		return &RuleError{Index: -1, Resource: g.Resource, Field: field, Reason: reason}
	}
	if g.StatIntervalMs == 0 {
		return Rule{}, nil, invalid("statIntervalMs", "must be > 0, got 0")
	}
	buckets := g.StatSlidingWindowBucketCount
	if buckets == 0 || g.StatIntervalMs%buckets != 0 {
		buckets = 1 // sentinel-golang's getRuleStatSlidingWindowBucketCount
	}
	minRequests := g.MinRequestAmount
	if minRequests == 0 {
		minRequests = 1 // 0 lets the first call trip; a Rule reads 0 as the default
	}
	r := Rule{
		ID:               g.ID,
		Resource:         g.Resource,
		Threshold:        g.Threshold,
		MinRequestAmount: minRequests,
		StatInterval:     time.Duration(g.StatIntervalMs) * time.Millisecond,
		BucketCount:      buckets,
		RetryTimeout:     time.Duration(g.RetryTimeoutMs) * time.Millisecond,
	}
	if g.ProbeNum > maxProbeNum {
		return Rule{}, nil, invalid("probeNum", fmt.Sprintf("must be at most %d, got %d", maxProbeNum, g.ProbeNum))
	}
	r.ProbeNum = uint32(g.ProbeNum)
	from := map[string]string{
		"Threshold":    sentinelSource("threshold", g.Threshold),
		"RetryTimeout": sentinelSource("retryTimeoutMs", g.RetryTimeoutMs),
		"StatInterval": sentinelSource("statIntervalMs", g.StatIntervalMs),
		"BucketCount":  sentinelSource("statSlidingWindowBucketCount", g.StatSlidingWindowBucketCount),
	}
	switch g.Strategy {
	case 0:
		if g.MaxAllowedRtMs > uint64(maxMillis) {
			return Rule{}, nil, invalid("maxAllowedRtMs",
				fmt.Sprintf("must be at most %d, got %d", maxMillis, g.MaxAllowedRtMs))
		}
		r.Strategy, r.MaxAllowedRT = SlowRequestRatio, time.Duration(g.MaxAllowedRtMs)*time.Millisecond
		from["MaxAllowedRT"] = sentinelSource("maxAllowedRtMs", g.MaxAllowedRtMs)
	case 1:
		r.Strategy = ErrorRatio
	case 2:
		// errorCountCircuitBreaker compares errors >= uint64(Threshold).
		r.Strategy, r.Threshold = ErrorCount, math.Trunc(g.Threshold)
	default:
		return Rule{}, nil, invalid("strategy", fmt.Sprintf(
			"must be 0 (SlowRequestRatio), 1 (ErrorRatio) or 2 (ErrorCount), got %d", g.Strategy))
	}
	return r, from, nil
}
