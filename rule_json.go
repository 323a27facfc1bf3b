package breaker

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/halfopen/breaker/internal/strictjson"
)

var (
	_ encoding.TextMarshaler   = Strategy(0)
	_ encoding.TextUnmarshaler = (*Strategy)(nil)
	_ json.Marshaler           = Rule{}
	_ json.Unmarshaler         = (*Rule)(nil)
)

// strategyNames lists the names MarshalText writes, for error messages.
const strategyNames = "SlowRequestRatio, ErrorRatio, ErrorCount or ConsecutiveErrors"

// MarshalText returns the strategy's name, as String does: "SlowRequestRatio", "ErrorRatio" or
// "ErrorCount". A strategy without a name is an error, so that no text is written that
// UnmarshalText would refuse.
func (s Strategy) MarshalText() ([]byte, error) {
	if _, ok := parseStrategy(s.String()); !ok {
		return nil, fmt.Errorf("breaker: cannot marshal unknown strategy %d: want %s", int32(s), strategyNames)
	}
	return []byte(s.String()), nil
}

// UnmarshalText sets s from a name that MarshalText writes. The name must match exactly; any
// other text is an error that lists the valid names, and leaves s unchanged.
func (s *Strategy) UnmarshalText(text []byte) error {
	v, ok := parseStrategy(string(text))
	if !ok {
		return fmt.Errorf("breaker: unknown strategy %q: want %s", text, strategyNames)
	}
	*s = v
	return nil
}

func parseStrategy(name string) (Strategy, bool) {
	for _, s := range []Strategy{SlowRequestRatio, ErrorRatio, ErrorCount, ConsecutiveErrors} {
		if name == s.String() {
			return s, true
		}
	}
	return 0, false
}

// ruleJSON is the JSON form of a Rule. Durations are pointers so that a field left out can be
// told from one written as "" (an error); in output, nil leaves an optional field out.
type ruleJSON struct {
	ID               string  `json:"id,omitempty"`
	Resource         string  `json:"resource"`
	Strategy         *string `json:"strategy"`
	Threshold        float64 `json:"threshold"`
	MaxAllowedRT     *string `json:"maxAllowedRT,omitempty"`
	MinRequestAmount uint64  `json:"minRequestAmount,omitempty"`
	StatInterval     *string `json:"statInterval,omitempty"`
	BucketCount      uint32  `json:"bucketCount,omitempty"`
	StatCalls        uint32  `json:"statCalls,omitempty"`
	RetryTimeout     *string `json:"retryTimeout"`
	ProbeTimeout     *string `json:"probeTimeout,omitempty"`
	ProbeNum         uint32  `json:"probeNum,omitempty"`
	MaxRetryTimeout  *string `json:"maxRetryTimeout,omitempty"`
	RetryJitter      float64 `json:"retryJitter,omitempty"`
	DryRun           bool    `json:"dryRun,omitempty"`
	FastBuckets      uint32  `json:"fastBuckets,omitempty"`
	FastThreshold    float64 `json:"fastThreshold,omitempty"`
	RampUp           *string `json:"rampUp,omitempty"`
	Pace             bool    `json:"pace,omitempty"`
}

// ruleFields names the fields of the JSON form, for the error about an unknown one.
const ruleFields = "id, resource, strategy, threshold, maxAllowedRT, minRequestAmount, " +
	"statInterval, bucketCount, statCalls, retryTimeout, probeTimeout, probeNum, maxRetryTimeout, retryJitter, dryRun, fastBuckets, fastThreshold, rampUp, pace"

// durationWant describes a duration field's value in errors.
const durationWant = `a Go duration string such as "300ms" or "10s"`

// ruleJSONWants describes, for errors, what the fields of ruleJSON hold where their Go type
// would not say it well.
var ruleJSONWants = map[string]string{
	"strategy":        "one of the strings " + strategyNames,
	"maxAllowedRT":    durationWant,
	"statInterval":    durationWant,
	"retryTimeout":    durationWant,
	"probeTimeout":    durationWant,
	"maxRetryTimeout": durationWant,
	"rampUp":          durationWant,
}

// MarshalJSON writes the rule as a JSON object:
//
//	{"id":"slow-orders","resource":"GET:/order","strategy":"SlowRequestRatio","threshold":0.6,
//	 "maxAllowedRT":"300ms","minRequestAmount":10,"statInterval":"10s","bucketCount":20,
//	 "retryTimeout":"10s","probeTimeout":"1s"}
//
// Strategy is written as its name and durations as Go duration strings (time.Duration.String).
// Resource, strategy, threshold and retryTimeout are always written; id, maxAllowedRT,
// minRequestAmount, statInterval, bucketCount, probeTimeout, dryRun and the other optional
// fields only when they are not zero, so
// a rule that keeps the defaults reads short. It returns an error for a Strategy without a name
// and for a Threshold that is NaN or infinite, which JSON cannot hold.
func (r Rule) MarshalJSON() ([]byte, error) {
	name, err := r.Strategy.MarshalText()
	if err != nil {
		return nil, fmt.Errorf("breaker: cannot marshal rule (resource %q): unknown strategy %d",
			r.Resource, int32(r.Strategy))
	}
	if math.IsNaN(r.Threshold) || math.IsInf(r.Threshold, 0) {
		return nil, fmt.Errorf("breaker: cannot marshal rule (resource %q): threshold %v is not a JSON number",
			r.Resource, r.Threshold)
	}
	strategy, retry := string(name), r.RetryTimeout.String()
	return json.Marshal(ruleJSON{
		ID:               r.ID,
		Resource:         r.Resource,
		Strategy:         &strategy,
		Threshold:        r.Threshold,
		MaxAllowedRT:     optionalDuration(r.MaxAllowedRT),
		MinRequestAmount: r.MinRequestAmount,
		StatInterval:     optionalDuration(r.StatInterval),
		BucketCount:      r.BucketCount,
		StatCalls:        r.StatCalls,
		RetryTimeout:     &retry,
		ProbeTimeout:     optionalDuration(r.ProbeTimeout),
		ProbeNum:         r.ProbeNum,
		MaxRetryTimeout:  optionalDuration(r.MaxRetryTimeout),
		RetryJitter:      r.RetryJitter,
		DryRun:           r.DryRun,
		FastBuckets:      r.FastBuckets,
		FastThreshold:    r.FastThreshold,
		RampUp:           optionalDuration(r.RampUp),
		Pace:             r.Pace,
	})
}

// optionalDuration is d as a duration string, or nil when d is zero.
func optionalDuration(d time.Duration) *string {
	if d == 0 {
		return nil
	}
	s := d.String()
	return &s
}

// UnmarshalJSON reads a rule in the form MarshalJSON writes. It replaces the whole rule: a field
// left out, or null, is zero whatever r held before. JSON null for the whole rule leaves r as
// it is.
//
// Keys match the field names exactly: unlike encoding/json's default, a key that differs from a
// field only in case ("retrytimeout") is not taken for it, and a key may be written only once.
//
// It returns a *RuleError (wrapping ErrInvalidRule, with Index -1 and Field set to the JSON
// key) for a field it does not know, a key written twice, a key that matches a field only when
// case is ignored, a value of the wrong JSON type, a duration that time.ParseDuration refuses
// (so "5" and 5 are errors: write "5s"), or a strategy name it does not know; and an error for
// input that is not one JSON value, which says where (line, column and byte offset) for
// malformed JSON. It does not call Validate: a
// rule may be decoded and then completed in code. ParseRules decodes and validates.
func (r *Rule) UnmarshalJSON(b []byte) error {
	rule, _, err := decodeRule(b)
	if err != nil {
		return err
	}
	if rule != nil {
		*r = *rule
	}
	return nil
}

// decodeRule decodes one rule. It returns a nil rule for JSON null, and reports whether the
// rule named its strategy (the zero Strategy is a valid one, so ParseRules asks for it).
func decodeRule(b []byte) (rule *Rule, hasStrategy bool, err error) {
	if strictjson.IsNull(b) {
		return nil, false, nil
	}
	if err := checkKeys(strictjson.ObjectKeys(b, "resource"), ruleKeys); err != nil {
		return nil, false, err
	}
	var j ruleJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, false, decodeError(err, b, "rule", j.Resource, ruleJSONWants)
	}
	if end := dec.InputOffset(); !strictjson.AtEOF(dec) {
		return nil, false, fmt.Errorf("breaker: rule is not valid JSON: data after the rule's object at byte %d",
			end)
	}
	invalid := func(field, reason string) error {
		return &RuleError{Index: -1, Resource: j.Resource, Field: field, Reason: reason}
	}

	r := &Rule{ID: j.ID, Resource: j.Resource, Threshold: j.Threshold,
		MinRequestAmount: j.MinRequestAmount, BucketCount: j.BucketCount, StatCalls: j.StatCalls, ProbeNum: j.ProbeNum,
		RetryJitter: j.RetryJitter, DryRun: j.DryRun, FastBuckets: j.FastBuckets, FastThreshold: j.FastThreshold,
		Pace: j.Pace}
	if j.Strategy != nil {
		s, ok := parseStrategy(*j.Strategy)
		if !ok {
			return nil, false, invalid("strategy", fmt.Sprintf("must be %s, got %q", strategyNames, *j.Strategy))
		}
		r.Strategy = s
	}
	for _, d := range []struct {
		field string
		text  *string
		dst   *time.Duration
	}{
		{"maxAllowedRT", j.MaxAllowedRT, &r.MaxAllowedRT},
		{"statInterval", j.StatInterval, &r.StatInterval},
		{"retryTimeout", j.RetryTimeout, &r.RetryTimeout},
		{"probeTimeout", j.ProbeTimeout, &r.ProbeTimeout},
		{"maxRetryTimeout", j.MaxRetryTimeout, &r.MaxRetryTimeout},
		{"rampUp", j.RampUp, &r.RampUp},
	} {
		if d.text == nil {
			continue
		}
		v, err := time.ParseDuration(*d.text)
		if err != nil {
			return nil, false, invalid(d.field, fmt.Sprintf("must be %s, got %q", durationWant, *d.text))
		}
		*d.dst = v
	}
	return r, j.Strategy != nil, nil
}

// ParseRules reads a JSON array of rules, each in the form Rule.MarshalJSON writes, and
// validates each one alone (Rule.Validate); it also requires each to name its strategy. JSON
// null and [] give an empty slice.
//
// A rule that cannot be decoded or is invalid gives a *RuleError (wrapping ErrInvalidRule)
// whose Index is the rule's position in the array; keys are read as Rule.UnmarshalJSON reads
// them (exactly, once each). Input that is not a JSON array gives an error that does not wrap
// ErrInvalidRule; for malformed JSON it gives the line and column (both from 1) and the byte
// offset. Rules that are fine alone but not together (two identical rules for one resource,
// too many rules for one resource) are left to Manager.LoadRules, which rejects them.
func ParseRules(data []byte) ([]Rule, error) {
	raws, err := strictjson.SplitArray(data, "rules")
	if err != nil {
		return nil, err
	}
	rules := make([]Rule, 0, len(raws))
	for i, raw := range raws {
		if strictjson.IsNull(raw) {
			return nil, &RuleError{Index: i, Reason: "must be a JSON object, got null"}
		}
		r, hasStrategy, err := decodeRule(raw)
		if err != nil {
			return nil, atIndex(err, i)
		}
		if !hasStrategy {
			return nil, &RuleError{Index: i, Resource: r.Resource, Field: "strategy",
				Reason: "is required: want " + strategyNames}
		}
		if err := r.Validate(); err != nil {
			return nil, atIndex(err, i)
		}
		rules = append(rules, *r)
	}
	return rules, nil
}

// atIndex sets the index of a *RuleError to i, or else prefixes err with it.
func atIndex(err error, i int) error {
	var re *RuleError
	if errors.As(err, &re) {
		at := *re
		at.Index = i
		return &at
	}
	return fmt.Errorf("breaker: rule %d: %w", i, err)
}

// decodeError turns an error from decoding one JSON object into a *RuleError naming the field
// at fault (an unknown field can only be a rule's: Sentinel's are ignored), or a plain error
// when the input is not JSON. what names the object ("rule", "Sentinel rule"); wants describes
// the fields whose Go type would not say well what they hold.
func decodeError(err error, data []byte, what, resource string, wants map[string]string) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("breaker: %s is not valid JSON: %v (at %s)", what, err, strictjson.Position(data, syntax))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("breaker: %s is not valid JSON: unexpected end of input", what)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return &RuleError{Index: -1, Resource: resource, Reason: "must be a JSON object, got " + typ.Value}
		}
		want, ok := wants[typ.Field]
		if !ok {
			want = strictjson.DescribeType(typ.Type)
		}
		return &RuleError{Index: -1, Resource: resource, Field: typ.Field,
			Reason: fmt.Sprintf("must be %s, got %s", want, typ.Value)}
	}
	// DisallowUnknownFields reports `json: unknown field "name"`.
	if quoted, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, uerr := strconv.Unquote(quoted)
		if uerr != nil {
			name = quoted
		}
		return &RuleError{Index: -1, Resource: resource, Field: name,
			Reason: "is not a rule field; the fields are " + ruleFields}
	}
	return &RuleError{Index: -1, Resource: resource, Reason: "cannot be decoded: " + err.Error()}
}

// ruleKeys are the keys of a rule's JSON form.
var ruleKeys = strictjson.Keys(reflect.TypeFor[ruleJSON]())

// checkKeys refuses what encoding/json would let through in silence (see
// strictjson.CheckKeys): the error is a *RuleError with Index -1 that names the key.
func checkKeys(obj strictjson.Object, known []string) error {
	if key, reason := strictjson.CheckKeys(obj.Keys, known); key != "" {
		return &RuleError{Index: -1, Resource: obj.Value, Field: key, Reason: reason}
	}
	return nil
}
