package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// The rule sets the fuzzer loads. They share rules (kept across reloads), relabel one, spell
// defaults out for another, and drop the rest.
var fuzzRuleSets = [][]breaker.Rule{
	{
		{ID: "a-count", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
		{ID: "a-slow", Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 2, RetryTimeout: 2 * time.Second},
		{ID: "b-ratio", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 4,
			BucketCount: 4, RetryTimeout: time.Second},
	},
	{
		{ID: "a-count-renamed", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
		{ID: "b-count", Resource: "b", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1,
			RetryTimeout: 500 * time.Millisecond},
		{ID: "c-slow", Resource: "c", Strategy: breaker.SlowRequestRatio, Threshold: 1, MaxAllowedRT: 10 * time.Millisecond,
			MinRequestAmount: 1, StatInterval: 200 * time.Millisecond, BucketCount: 2,
			RetryTimeout: 300 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond},
	},
	nil,
	{
		{ID: "b-ratio", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 4,
			StatInterval: time.Second, BucketCount: 4, RetryTimeout: time.Second, ProbeTimeout: time.Second},
		{ID: "a-count", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
		{ID: "c-count-default", Resource: "c", Strategy: breaker.ErrorCount, Threshold: 2,
			RetryTimeout: 700 * time.Millisecond},
	},
	{
		{ID: "a-count-dry", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond, DryRun: true},
		{ID: "a-count", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
		{ID: "b-slow-dry", Resource: "b", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 20 * time.Millisecond, MinRequestAmount: 2, RetryTimeout: 400 * time.Millisecond,
			DryRun: true},
	},
	{
		{ID: "a-probes", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			ProbeNum: 3, RetryTimeout: 500 * time.Millisecond, MaxRetryTimeout: 3 * time.Second,
			ProbeTimeout: 300 * time.Millisecond},
		{ID: "b-run", Resource: "b", Strategy: breaker.ConsecutiveErrors, Threshold: 3, ProbeNum: 2,
			RetryTimeout: time.Second, MaxRetryTimeout: 2 * time.Second},
		{ID: "c-slow-probes", Resource: "c", Strategy: breaker.SlowRequestRatio, Threshold: 1,
			MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 1, ProbeNum: 2, RetryTimeout: 200 * time.Millisecond},
	},
	// Templates: "da" and "db" get two breakers from "d*", "x" and "c" one from "*".
	{
		{ID: "d-count", Resource: "d*", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
		{ID: "d-slow", Resource: "d*", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 2, RetryTimeout: 2 * time.Second},
		{ID: "all", Resource: "*", Strategy: breaker.ErrorCount, Threshold: 1, ProbeNum: 2,
			RetryTimeout: 500 * time.Millisecond},
		{ID: "a-count", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
	},
	// "d*" relabeled (kept), "*" changed (dropped), and "da" with a rule of its own.
	{
		{ID: "d-count-renamed", Resource: "d*", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
		{ID: "d-slow", Resource: "d*", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 2, RetryTimeout: 2 * time.Second},
		{ID: "all-2", Resource: "*", Strategy: breaker.ConsecutiveErrors, Threshold: 2,
			RetryTimeout: 500 * time.Millisecond, MaxRetryTimeout: 2 * time.Second},
		{ID: "da-own", Resource: "da", Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: 300 * time.Millisecond},
	},
	// The first set tuned and reordered: each rule keeps its window's shape, so each keeps its
	// breaker, state and window, and the new values apply from the next call. And "c" judged
	// by windows of its last calls, a slow one with its calls in flight.
	{
		{ID: "c-ratio-calls", Resource: "c", Strategy: breaker.ErrorRatio, Threshold: 0.5, StatCalls: 4,
			MinRequestAmount: 2, RetryTimeout: 300 * time.Millisecond},
		{ID: "c-slow-calls", Resource: "c", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 10 * time.Millisecond, StatCalls: 3, RetryTimeout: 200 * time.Millisecond},
		{ID: "b-ratio-tuned", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.75, MinRequestAmount: 2,
			BucketCount: 4, RetryTimeout: 700 * time.Millisecond, ProbeNum: 2, DryRun: true},
		{ID: "a-slow-tuned", Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.25,
			MaxAllowedRT: 20 * time.Millisecond, MinRequestAmount: 3, RetryTimeout: time.Second,
			ProbeTimeout: 200 * time.Millisecond},
		{ID: "a-count-tuned", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			RetryTimeout: 2 * time.Second, MaxRetryTimeout: 4 * time.Second, ProbeTimeout: 100 * time.Millisecond},
	},
	// The templates of set 6 with "d*" reordered, one rule tuned, one added, and "*" tuned.
	{
		{ID: "d-slow", Resource: "d*", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 2, RetryTimeout: 2 * time.Second},
		{ID: "d-ratio", Resource: "d*", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			RetryTimeout: time.Second},
		{ID: "d-count-tuned", Resource: "d*", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1,
			RetryTimeout: 500 * time.Millisecond},
		{ID: "all-tuned", Resource: "*", Strategy: breaker.ErrorCount, Threshold: 2, ProbeNum: 1,
			RetryTimeout: 300 * time.Millisecond},
		{ID: "a-count", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
	},
	// Newest buckets judged on their own: "b-ratio" of set 1 tuned to them (kept), and a slow
	// rule and a template that have them from the start.
	{
		{ID: "b-ratio-fast", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: time.Second, BucketCount: 4, FastBuckets: 1, FastThreshold: 0.5, RetryTimeout: time.Second},
		{ID: "c-slow-fast", Resource: "c", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 2, StatInterval: 400 * time.Millisecond,
			BucketCount: 4, FastBuckets: 2, FastThreshold: 0.9, RetryTimeout: 300 * time.Millisecond},
		{ID: "d-ratio-fast", Resource: "d*", Strategy: breaker.ErrorRatio, Threshold: 0.6, MinRequestAmount: 3,
			FastBuckets: 3, FastThreshold: 0.75, RetryTimeout: 500 * time.Millisecond},
	},
	// Ramps after recovery: on a count rule and a slow rule of "a" (both pace its calls, a
	// probe of one may meet the other's ramp), on "b" with a fast trip, on a template, and
	// a DryRun ramp on "c".
	{
		{ID: "a-count-ramp", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			StatInterval: 400 * time.Millisecond, BucketCount: 4, RetryTimeout: 300 * time.Millisecond,
			RampUp: 800 * time.Millisecond},
		{ID: "a-slow-ramp", Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 2, StatInterval: 200 * time.Millisecond,
			BucketCount: 2, RetryTimeout: 200 * time.Millisecond, RampUp: 2 * time.Second},
		{ID: "b-ratio-ramp", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: time.Second, BucketCount: 4, FastBuckets: 1, RetryTimeout: 400 * time.Millisecond,
			RampUp: time.Second},
		{ID: "c-count-ramp-dry", Resource: "c", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1,
			StatInterval: 100 * time.Millisecond, BucketCount: 2, RetryTimeout: 100 * time.Millisecond,
			RampUp: 500 * time.Millisecond, DryRun: true},
		{ID: "d-count-ramp", Resource: "d*", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			RetryTimeout: 300 * time.Millisecond, RampUp: 600 * time.Millisecond},
	},
	// The first set with a-slow's MaxAllowedRT raised to 5 s: its ring must span more, so a
	// new ring counts the calls from the reload on, and the old ring's calls are judged by 5 s.
	{
		{ID: "a-count", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1,
			RetryTimeout: time.Second, ProbeTimeout: 500 * time.Millisecond},
		{ID: "a-slow", Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 5 * time.Second, MinRequestAmount: 2, RetryTimeout: 2 * time.Second},
		{ID: "b-ratio", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 4,
			BucketCount: 4, RetryTimeout: time.Second},
	},
	// The ramps of the set before last shortened or taken away: a ramp in progress ends no later
	// than its close plus the new RampUp.
	{
		{ID: "a-count-ramp", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			StatInterval: 400 * time.Millisecond, BucketCount: 4, RetryTimeout: 300 * time.Millisecond,
			RampUp: 150 * time.Millisecond},
		{ID: "a-slow-ramp", Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 2, StatInterval: 200 * time.Millisecond,
			BucketCount: 2, RetryTimeout: 200 * time.Millisecond},
		{ID: "b-ratio-ramp", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: time.Second, BucketCount: 4, FastBuckets: 1, RetryTimeout: 400 * time.Millisecond,
			RampUp: 300 * time.Millisecond},
		{ID: "c-count-ramp-dry", Resource: "c", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1,
			StatInterval: 100 * time.Millisecond, BucketCount: 2, RetryTimeout: 100 * time.Millisecond,
			RampUp: 500 * time.Millisecond, DryRun: true},
		{ID: "d-count-ramp", Resource: "d*", Strategy: breaker.ErrorCount, Threshold: 2, MinRequestAmount: 1,
			RetryTimeout: 300 * time.Millisecond},
	},
	// The "*" of set 6 alone: loading set 6 after it gives "da" and "db" to a narrower template
	// of two rules, while "x" keeps its breaker.
	{
		{ID: "all", Resource: "*", Strategy: breaker.ErrorCount, Threshold: 1, ProbeNum: 2,
			RetryTimeout: 500 * time.Millisecond},
	},
	// Pacing: "b-ratio" of set 0 tuned to pace (kept), "a" paced by an error rule with a fast
	// trip beside a slow rule that also ramps up after recovery, a DryRun pacer on "c", and a
	// template that paces.
	{
		{ID: "a-ratio-pace", Resource: "a", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: 400 * time.Millisecond, BucketCount: 4, FastBuckets: 1, FastThreshold: 0.9,
			RetryTimeout: 300 * time.Millisecond, Pace: true},
		{ID: "a-slow-pace", Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 2, StatInterval: 200 * time.Millisecond,
			BucketCount: 2, RetryTimeout: 200 * time.Millisecond, RampUp: time.Second, Pace: true},
		{ID: "b-ratio-pace", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 4,
			BucketCount: 4, RetryTimeout: time.Second, Pace: true},
		{ID: "c-ratio-pace-dry", Resource: "c", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: 200 * time.Millisecond, BucketCount: 2, RetryTimeout: 100 * time.Millisecond,
			Pace: true, DryRun: true},
		{ID: "d-ratio-pace", Resource: "d*", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			RetryTimeout: 500 * time.Millisecond, Pace: true},
	},
	// The pacers of the set before with Pace turned off on "a-ratio" and "b" (kept: pacing in
	// progress ends at the next call), the slow one's threshold raised.
	{
		{ID: "a-ratio", Resource: "a", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: 400 * time.Millisecond, BucketCount: 4, FastBuckets: 1, FastThreshold: 0.9,
			RetryTimeout: 300 * time.Millisecond},
		{ID: "a-slow-pace", Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.75,
			MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 2, StatInterval: 200 * time.Millisecond,
			BucketCount: 2, RetryTimeout: 200 * time.Millisecond, RampUp: time.Second, Pace: true},
		{ID: "b-ratio", Resource: "b", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 4,
			BucketCount: 4, RetryTimeout: time.Second},
		{ID: "c-ratio-pace-dry", Resource: "c", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: 200 * time.Millisecond, BucketCount: 2, RetryTimeout: 100 * time.Millisecond,
			Pace: true, DryRun: true},
	},
}

// fuzzTemplateLimit bounds the template breakers of the fuzzed Manager: "da" and "db" with two
// each and "x" with one do not fit together.
const fuzzTemplateLimit = 3

// fuzzNames are the resources the operations name: a, b and c, or, after opNames, names
// that templates match.
var fuzzNames = [2][3]string{{"a", "b", "c"}, {"da", "db", "x"}}

var errSlotBlocks = errors.New("slot blocks")

// toggleSlot blocks every call while on.
type toggleSlot struct{ on bool }

func (s *toggleSlot) OnEntry(*breaker.Entry) error {
	if s.on {
		return errSlotBlocks
	}
	return nil
}

func (s *toggleSlot) OnExit(*breaker.Entry) {}

// The operations of FuzzStateMachine, one byte each, most followed by one argument byte.
const (
	opAdvance  = iota // the clock moves forward
	opRewind          // the clock moves back
	opEnter           // Enter on resource a, b or c
	opExit            // Exit an open entry after some time, succeeding, failing or canceled
	opAbandon         // forget an open entry: it never exits
	opLoad            // LoadRules of a fixed set
	opToggle          // turn the blocking slot on or off
	opDo              // Do on a resource, taking some time, with an outcome; with an outcome byte from 0xf0, a context already done; from 0xe0, its caller cancels it as it fails
	opSettings        // change one resource's settings, or a template setting's: force, concurrency limit, or none
	opReset           // Reset a resource; with an argument from 0xf0, arm an observer that resets it as the next probe of one of its breakers is taken
	opNames           // switch between the two sets of resource names
	opLeap            // the clock jumps a century ahead or back, within two from the start
	opLull            // no call for a quiet spell of an hour or more: the clock moves ahead by one
	opTimeout         // give a resource a Timeout (1ns: every call through Do runs past it), or take it away
	opOverride        // an operator's override of a resource (Auto, ForceOpen, ForceClosed), or its end
	opNest            // Do on a resource whose function calls it again through Do, with its context or one of its own
	opCount
)

// fuzzOverrides are what opOverride does: an override of a force for a while, or the end of one.
var fuzzOverrides = []struct {
	force breaker.Force
	d     time.Duration // 0: EndOverride
}{{breaker.Auto, time.Second}, {breaker.ForceOpen, time.Second}, {breaker.ForceClosed, time.Second},
	{breaker.ForceOpen, 100 * time.Millisecond}, {breaker.ForceClosed, 10 * time.Second}, {0, 0}}

// fuzzLulls are the quiet spells opLull leaves: an hour, a night, and 2^15 and 2^16 buckets of
// 100 and 250 ms, where a bucket numbered in 16 bits would be taken for an old one.
var fuzzLulls = []time.Duration{time.Hour, 10 * time.Hour, (1 << 15) * 100 * time.Millisecond,
	(1 << 16) * 250 * time.Millisecond}

var fuzzOutcomes = []error{nil, errDown, context.Canceled}

// fuzzRefused are what the calls refused by a live dependency return, without a retry hint and
// with one, and fuzzRefusals the same marked Refused, as their functions return them.
var (
	fuzzRefused  = []error{errDown, breaker.RetryAfter(errDown, modelRefusalHint)}
	fuzzRefusals = []error{breaker.CountAs(fuzzRefused[0], breaker.Refused), breaker.CountAs(fuzzRefused[1], breaker.Refused)}
)

// fuzzOutcome is how the model counts a call with the outcome byte b (from 0xd0 to 0xdf, a
// refusal, with a hint from 0xd8), what the call returns, and what Do returns of it.
func fuzzOutcome(b byte) (o modelOutcome, returned, got error) {
	if b >= 0xd0 && b < 0xe0 {
		i := int(b>>3) & 1
		return modelRefused + modelOutcome(i), fuzzRefusals[i], fuzzRefused[i]
	}
	o = modelOutcome(int(b) % len(fuzzOutcomes))
	return o, fuzzOutcomes[o], fuzzOutcomes[o]
}

// FuzzStateMachine applies a sequence of operations to the library and to its reference model
// (model_test.go), and fails at the first difference in what was let through, a BlockError, a
// state or a reported transition.
func FuzzStateMachine(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		runStateMachine(t, ops)
	})
}

// Seeds that reach every transition: trips, probes that succeed, fail, time out, are blocked
// or canceled, reloads with calls in flight, and a clock that steps back.
var fuzzSeeds = [][]byte{
	// Low traffic: a-ratio-pace (set 15) sees a success, then a failure a bucket later: the
	// window meets its threshold and would pace, but its newest bucket failed whole, and opens
	// it however few calls it holds.
	{0, opLoad, 15, opDo, 0x00, 0x00, opAdvance, 0x29, opDo, 0x00, 0x01, opAdvance, 0x29, opDo, 0x00, 0x00},
	// Refusals (0xd0: without a retry hint; 0xd8: with one of 700ms). b paces on two successes and
	// two refusals with a hint, and holds every call back until the hint ends; a refusal alone
	// in a bucket keeps pacing alive. b-ratio-fast (set 10) trips on refusals by its window,
	// never by its fast threshold, and a refused probe fails, OPEN for the hint; a run of
	// failures (set 5) goes on across refusals.
	{0, opLoad, 15, opDo, 0x01, 0x00, opDo, 0x01, 0x00, opDo, 0x01, 0xd9, opDo, 0x01, 0xd9,
		opDo, 0x01, 0x00, opAdvance, 0x3d, opDo, 0x01, 0x00, opAdvance, 0xf1, opDo, 0x01, 0x00,
		opDo, 0x01, 0x00, opDo, 0x01, 0xd1, opAdvance, 0x3d, opAdvance, 0x3d, opDo, 0x01, 0xd1,
		opAdvance, 0x65, opDo, 0x01, 0x00, opDo, 0x01, 0x00, opAdvance, 0x03, opDo, 0x01, 0x00,
		opLoad, 10, opDo, 0x01, 0xd0, opDo, 0x01, 0xd0, opAdvance, 0x03, opDo, 0x01, 0xd8,
		opAdvance, 0x03, opDo, 0x01, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01,
		opLoad, 5, opDo, 0x00, 0xd8, opDo, 0x00, 0xd8, opAdvance, 0x01, opDo, 0x00, 0xd8,
		opDo, 0x01, 0x01, opDo, 0x01, 0xd0, opDo, 0x01, 0x01, opDo, 0x01, 0xd0, opDo, 0x01, 0x01},
	// Quiet spells: b paces (set 15), then an hour passes, then 2^16 of its buckets: the first
	// call after each finds pacing over. a trips and recovers into a ramp (set 11), which holds
	// calls back; after 2^15 buckets of 100 ms its calls find their bucket fresh.
	{0, opLoad, 15, opDo, 0x01, 0x00, opDo, 0x01, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01,
		opDo, 0x01, 0x00, opLull, 0, opDo, 0x01, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01,
		opDo, 0x01, 0x00, opDo, 0x01, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01, opDo, 0x01, 0x00,
		opLull, 3, opDo, 0x01, 0x00, opDo, 0x01, 0x00,
		opLoad, 11, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opAdvance, 0x0d, opDo, 0x00, 0x00,
		opDo, 0x00, 0x01, opDo, 0x00, 0x01, opLull, 2, opDo, 0x00, 0x00, opDo, 0x00, 0x00, opDo, 0x00, 0x01},
	// Nested calls: while a's breakers are CLOSED a call nested in another counts on its own (two
	// failures trip a-count at 3 with the one before); after the retry time, the probe's nested
	// call passes as part of it, uncounted, though it fails, and the probe's success closes a;
	// a nested call with a context of its own is rejected for the probe.
	{0, opDo, 0x00, 0x01, opNest, 0x00, 0x04, opAdvance, 0x27, opNest, 0x00, 0x03, opDo, 0x00, 0x01,
		opDo, 0x00, 0x01, opDo, 0x00, 0x01, opAdvance, 0x27, opNest, 0x00, 0x83, opAdvance, 0x27,
		opNest, 0x00, 0x04},
	// Overrides: a ForceClosed on a while it trips (its breakers dry), one on x, a name no rule
	// has; a ForceOpen on b for 100ms that ends by itself, heard at the next change, which is an
	// override of c; an Auto on a that a second override replaces, and an end.
	{0, opOverride, 6, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x00,
		opOverride, 10, opDo, 0x01, 0x00, opAdvance, 0x19, opDo, 0x01, 0x00, opOverride, 14,
		opOverride, 0, opOverride, 3, opOverride, 15, opNames, opOverride, 8, opDo, 0x02, 0x01,
		opNames, opLoad, 6, opNames, opDo, 0x02, 0x01, opOverride, 17, opLull, 0, opLoad, 0},
	// Calls whose callers cancel them as they fail with errors of their own count neither way:
	// three on a leave a-count (3 failures) CLOSED. With a Timeout, three calls that return nil
	// past it fail, and are slow: a trips; the Timeout taken away, a recovers on a probe.
	{0, opDo, 0x00, 0xe1, opDo, 0x00, 0xe1, opDo, 0x00, 0xe1, opDo, 0x00, 0x00,
		opTimeout, 0, opDo, 0x00, 0x00, opDo, 0x00, 0x00, opDo, 0x00, 0x00, opTimeout, 0,
		opAdvance, 0x27, opDo, 0x00, 0x00, opDo, 0x00, 0x00},
	// Pacing takes no share of the calls offered: b paces, then in a bucket after one without a
	// success it lets the first of 11 calls through, and not the 11th, as a ramp's k/10 would.
	{0, opLoad, 15, opDo, 0x01, 0x00, opDo, 0x01, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01,
		opAdvance, 0x12, opEnter, 1, opEnter, 1, opEnter, 1, opEnter, 1, opEnter, 1, opEnter, 1,
		opEnter, 1, opEnter, 1, opEnter, 1, opEnter, 1, opEnter, 1},
	// Pacing on b: two successes and two failures start it, calls are held back, failures
	// go on until the window holds no success and it opens; pacing on a's slow rule, ended by
	// a bucket that takes every call; b paces again and a reload that turns Pace off ends it;
	// a Reset ends pacing on a; c paces in DryRun; a template paces.
	{0, opLoad, 15, opDo, 0x01, 0x00, opDo, 0x01, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01,
		opDo, 0x01, 0x00, opDo, 0x01, 0x01, opAdvance, 0x0a, opDo, 0x01, 0x01, opDo, 0x01, 0x01,
		opAdvance, 0x0a, opDo, 0x01, 0x01, opAdvance, 0x0a, opDo, 0x01, 0x01, opAdvance, 0x0a,
		opDo, 0x01, 0x01, opAdvance, 0x0a, opDo, 0x01, 0x01,
		opDo, 0x00, 0x00, opDo, 0x00, 0x00, opDo, 0x30, 0x00, opDo, 0x30, 0x00, opDo, 0x00, 0x00,
		opAdvance, 0x0a, opDo, 0x00, 0x00, opDo, 0x00, 0x00, opDo, 0x00, 0x00, opAdvance, 0x0a,
		opDo, 0x00, 0x00, opReset, 0,
		opAdvance, 0x27, opDo, 0x01, 0x00, opDo, 0x01, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01,
		opDo, 0x01, 0x00, opLoad, 16, opDo, 0x01, 0x00, opLoad, 15,
		opDo, 0x02, 0x00, opDo, 0x02, 0x01, opDo, 0x02, 0x01, opDo, 0x02, 0x00,
		opNames, opDo, 0x00, 0x00, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x00, opDo, 0x00, 0x00},
	// A template setting of "d*" with a limit of 1 beside a one-rule template: "da" and "db"
	// each count their own calls, and each holds a unit of the bound beside its breaker, so the
	// two do not fit together; then "*" gives "x" settings, and an entry of its own.
	{0, opLoad, 10, opNames, opSettings, 222, opEnter, 0, opEnter, 0, opExit, 0, 0, opEnter, 1,
		opExit, 0, 0, opAdvance, 0x10, opEnter, 0, opExit, 0, 0, opSettings, 0xf0, opEnter, 2, opExit, 0, 0},
	// A limit of 1 on a, a call in flight, the settings removed and loaded again: the call
	// still counts, so the next is rejected until it exits.
	{0, opSettings, 12, opEnter, 0, opSettings, 18, opSettings, 12, opEnter, 0, opExit, 0, 0, opEnter, 0},
	// Trips a, probes it, and tunes its rules while OPEN and while the probe is in flight.
	{0, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opLoad, 8, opDo, 0x00, 0x00,
		opAdvance, 0x14, opEnter, 0, opLoad, 0, opExit, 0, 0, opEnter, 0, opExit, 0, 0,
		opDo, 0x01, 0x01, opDo, 0x01, 0x01, opLoad, 8, opDo, 0x01, 0x01, opDo, 0x01, 0x00},
	// Set 11's ramps after a trip and a probe; a call hangs, another is slow, and the call that
	// ends the slow rule's ramp finds the hung one: 2 slow of 2, it trips.
	{0, opLoad, 11, opDo, 0x30, 0x31, opDo, 0x30, 0x31, opAdvance, 0x32, opDo, 0x1e, 0x1e, opEnter, 0x1e,
		opDo, 0x30, 0x30, opAdvance, 0x31, opEnter, 0},
	// Breakers made by "*" alone, one tripped; then "d*" takes "da" and "db" from it.
	{0, opLoad, 14, opNames, opDo, 0x00, 0x00, opDo, 0x01, 0x01, opDo, 0x02, 0x01, opLoad, 6,
		opDo, 0x00, 0x00, opDo, 0x01, 0x00, opDo, 0x02, 0x00},
	// Template breakers tripped, then their template reordered, tuned and grown past the bound.
	{0, opLoad, 6, opNames, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x02, 0x01, opLoad, 9,
		opDo, 0x00, 0x00, opDo, 0x01, 0x01, opAdvance, 0x10, opDo, 0x00, 0x00, opLoad, 6, opDo, 0x02, 0x00},
	{0, opEnter, 0, opExit, 0, 1, opEnter, 0, opExit, 0, 1, opEnter, 0, opExit, 0, 1,
		opAdvance, 0x27, opEnter, 0, opExit, 0, 0},
	{0, opDo, 0xcc, 0x00, opDo, 0xcc, 0x00, opAdvance, 0x07, opDo, 0xcc, 0x00, opAdvance, 0x07,
		opDo, 0x00, 0x00},
	{1, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opAdvance, 0x27, opToggle, opDo, 0x00, 0x00,
		opToggle, opDo, 0x00, 0x00},
	{0, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opAdvance, 0x27, opEnter, 0,
		opAdvance, 0x13, opEnter, 0, opExit, 0, 0, opExit, 0, 0},
	{0, opLoad, 1, opDo, 0x01, 0x01, opAdvance, 0x16, opDo, 0x01, 0x02, opDo, 0x01, 0x00,
		opDo, 0x42, 0x00, opLoad, 3, opDo, 0x01, 0x01},
	{0, opEnter, 1, opEnter, 1, opDo, 0x01, 0x01, opDo, 0x01, 0x01, opDo, 0x01, 0x01, opDo, 0x01, 0x00,
		opLoad, 2, opExit, 0, 1, opExit, 0, 1, opLoad, 0, opAbandon, 0},
	{0, opAdvance, 0x22, opDo, 0x01, 0x01, opRewind, 0x0e, opDo, 0x01, 0x01, opAdvance, 0x2a,
		opDo, 0x01, 0x01, opDo, 0x01, 0x01, opRewind, 0x27, opDo, 0x02, 0x00},
	{0, opLoad, 1, opDo, 0x2c, 0x00, opAdvance, 0x0a, opEnter, 2, opAdvance, 0x02, opDo, 0x02, 0x00,
		opExit, 0, 0, opAdvance, 0x0a, opDo, 0x02, 0x00},
	// ForceOpen, then Auto; a limit of one, with a probe it blocks; ForceClosed; Reset.
	{0, opSettings, 3, opDo, 0x00, 0x00, opSettings, 0, opDo, 0x00, 0x01, opDo, 0x00, 0x01,
		opDo, 0x00, 0x01, opSettings, 12, opSettings, 6, opEnter, 0, opSettings, 0, opAdvance, 0x27,
		opEnter, 0, opExit, 0, 0, opEnter, 0, opExit, 0, 0, opReset, 0, opSettings, 18, opEnter, 0},
	// Three probes in a row close a-probes; a failed one backs off; b-run trips on three
	// failures in a row, a success between them starts the run again.
	{0, opLoad, 5, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opAdvance, 0x13, opDo, 0x00, 0x00,
		opDo, 0x00, 0x00, opDo, 0x00, 0x01, opAdvance, 0x27, opEnter, 0, opEnter, 0, opExit, 0, 0,
		opDo, 0x00, 0x00, opDo, 0x00, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01, opDo, 0x01, 0x00,
		opDo, 0x01, 0x01, opDo, 0x01, 0x01, opDo, 0x01, 0x01, opAdvance, 0x27, opDo, 0x01, 0x00,
		opDo, 0x01, 0x00},
	// DryRun rules trip, probe and recover beside an enforced one.
	{0, opLoad, 4, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01,
		opAdvance, 0x27, opEnter, 0, opDo, 0x00, 0x01, opExit, 0, 0, opDo, 0x59, 0x00, opDo, 0x59, 0x00,
		opAdvance, 0x07, opDo, 0x01, 0x00, opReset, 1},
	// Templates: da trips, x trips, db needs room and the idlest OPEN one goes; a reload keeps
	// d*, drops *, and gives da its own rule; forced names; a call in flight across a drop.
	{0, opLoad, 6, opNames, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opAdvance, 0x07, opDo, 0x02, 0x01,
		opAdvance, 0x07, opDo, 0x01, 0x00, opDo, 0x00, 0x00, opAdvance, 0x27, opDo, 0x02, 0x00,
		opDo, 0x02, 0x00, opEnter, 2, opLoad, 7, opDo, 0x00, 0x01, opDo, 0x01, 0x01, opDo, 0x01, 0x01,
		opExit, 0, 1, opReset, 1, opSettings, 5, opDo, 0x02, 0x00, opSettings, 7, opDo, 0x01, 0x01,
		opAdvance, 0x03, opDo, 0x00, 0x00, opDo, 0x02, 0x01, opNames, opDo, 0x02, 0x01, opLoad, 0},
	// Eviction of CLOSED entries, idlest first, with calls in flight; the same names under
	// ForceClosed and a limit.
	{0, opLoad, 6, opNames, opEnter, 0, opAdvance, 0x02, opDo, 0x02, 0x00, opAdvance, 0x02,
		opEnter, 1, opExit, 0, 1, opExit, 0, 1, opAdvance, 0x02, opDo, 0x00, 0x01, opDo, 0x00, 0x01,
		opSettings, 0x0b, opSettings, 0x0c, opDo, 0x02, 0x01, opDo, 0x02, 0x01, opAdvance, 0x27,
		opDo, 0x02, 0x00, opDo, 0x01, 0x00, opLoad, 6, opDo, 0x00, 0x00},
	// Idle is since a call ended: x, entered first and ending last, outlives da.
	{0, opLoad, 6, opNames, opEnter, 2, opAdvance, 0x02, opDo, 0x00, 0x00, opAdvance, 0x02, opExit, 0, 0,
		opAdvance, 0x02, opDo, 0x01, 0x00},
	// A century ahead: a-count trips, waits its retry time, and a probe closes it; then three
	// failures 2s apart do not trip its 1s window.
	{0, opLeap, 0, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x00,
		opAdvance, 0x00, opDo, 0x00, 0x00, opAdvance, 0x27, opDo, 0x00, 0x00, opDo, 0x00, 0x01,
		opAdvance, 0x07, opDo, 0x00, 0x01, opAdvance, 0x07, opDo, 0x00, 0x01, opDo, 0x00, 0x01},
	// Two centuries ahead: the retry times of rejections, a probe that times out, one that
	// fails and backs off (a-probes), and b's ratio window.
	{0, opLeap, 0, opLeap, 2, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opEnter, 0,
		opAdvance, 0x27, opEnter, 0, opEnter, 0, opAdvance, 0x27, opEnter, 0, opLoad, 5,
		opDo, 0x00, 0x01, opDo, 0x00, 0x01, opAdvance, 0x13, opDo, 0x00, 0x01, opAdvance, 0x27,
		opDo, 0x00, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x00, opDo, 0x01, 0x01, opDo, 0x01, 0x01},
	// A century back, twice: an OPEN breaker probes at once, a probe in flight is overdue, and
	// the window starts again rather than keep counting into its newest bucket.
	{0, opLeap, 0, opLeap, 0, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opDo, 0x00, 0x01, opLeap, 1,
		opEnter, 0, opLeap, 1, opEnter, 0, opAdvance, 0x07, opDo, 0x00, 0x00, opDo, 0x00, 0x01,
		opDo, 0x00, 0x01, opAdvance, 0x07, opDo, 0x00, 0x01, opLeap, 0, opDo, 0x00, 0x01,
		opDo, 0x00, 0x01, opLeap, 0, opLeap, 0, opDo, 0x00, 0x01},
	// An observer resets "a" as a call takes the probe of a-count: the call meets a-slow,
	// whose probe it was to take next, CLOSED, and is admitted and counted by it.
	{0, opEnter, 0, opEnter, 0, opEnter, 0, opAdvance, 0x15, opExit, 0, 1, opExit, 0, 1, opExit, 0, 1,
		opAdvance, 0x0b, opReset, 0xf0, opDo, 0x00, 0x00, opDo, 0xf0, 0x01, opDo, 0xf0, 0x01},
	// a-slow's MaxAllowedRT raised from 50 ms to 5 s with two calls in flight: after a second
	// they are not slow; then lowered back with two calls in flight: after a second they are,
	// and trip it.
	{0, opEnter, 0, opEnter, 0, opLoad, 12, opAdvance, 0x03, opDo, 0x00, 0x00, opDo, 0x00, 0x00,
		opExit, 0, 0, opExit, 0, 0, opEnter, 0, opEnter, 0, opLoad, 0, opAdvance, 0x03, opDo, 0x00, 0x00,
		opExit, 0, 0, opExit, 0, 0},
	// The clock steps back 4 s, past a-slow's ring, with two calls in flight: a new ring
	// counts the next call, and the two count when they return, slow, and trip it.
	{0, opEnter, 0, opEnter, 0, opRewind, 0x0f, opDo, 0x00, 0x00, opAdvance, 0x0f, opAdvance, 0x15,
		opExit, 0, 0, opExit, 0, 0},
	// b-ratio-ramp trips, a probe closes it at 400 ms and it ramps up for 1 s: of three calls
	// that stay in flight, it holds back the third. A reload shortens RampUp to 300 ms, so at
	// 700 ms the ramp is over and three more such calls pass.
	{0, opLoad, 11, opDo, 0x01, 0x01, opDo, 0x01, 0x01, opAdvance, 0x0e, opDo, 0x01, 0x00,
		opEnter, 1, opEnter, 1, opEnter, 1, opLoad, 13, opAdvance, 0x0a, opEnter, 1, opEnter, 1, opEnter, 1},
	// Calls whose context is done before they are admitted count nowhere: ten of them on b's
	// ErrorRatio rule, one on a name a template matches (no breakers made), and one when a's
	// probe is due, which stays due for the next call.
	{0, opDo, 0x01, 0xf0, opDo, 0x01, 0xf0, opDo, 0x01, 0xf0, opDo, 0x01, 0xf0, opDo, 0x01, 0xf0,
		opDo, 0x01, 0xf0, opDo, 0x01, 0xf0, opDo, 0x01, 0xf0, opDo, 0x01, 0xf0, opDo, 0x01, 0xf0,
		opDo, 0x01, 0x00, opLoad, 6, opNames, opDo, 0x02, 0xf0, opNames, opLoad, 0, opDo, 0x00, 0x01,
		opDo, 0x00, 0x01, opDo, 0x00, 0x01, opAdvance, 0x03, opDo, 0x00, 0xf0, opDo, 0x00, 0x00},
	// Templates across leaps: the names used before a leap back are the idlest after it, so
	// da goes when db needs room, and x, used after the leap, stays.
	{0, opLeap, 0, opLoad, 6, opNames, opDo, 0x00, 0x00, opAdvance, 0x02, opDo, 0x02, 0x00, opLeap, 1,
		opDo, 0x02, 0x00, opDo, 0x01, 0x00, opLeap, 0, opLeap, 0, opDo, 0x00, 0x01, opDo, 0x00, 0x01,
		opLeap, 0, opDo, 0x01, 0x00, opAdvance, 0x27, opDo, 0x00, 0x00},
}

func runStateMachine(t *testing.T, ops []byte) {
	if len(ops) == 0 {
		return
	}
	clock := breakertest.NewClock()
	slot := &toggleSlot{}
	stream := &streamLog{}
	// The overrides the fuzzer sets are logged at INFO: discard them, as they are many.
	opts := []breaker.Option{breaker.WithClock(clock), breaker.WithCallObserver(stream.call),
		breaker.WithLogger(slog.New(slog.DiscardHandler))}
	if ops[0]%2 == 1 {
		opts = append(opts, breaker.WithSlots(slot))
	}
	opts = append(opts, breaker.WithMaxTemplateBreakers(fuzzTemplateLimit))
	step := 0
	if ops[0]&2 != 0 {
		// Each call writes the stripe its step names, so the windows count a run's calls in
		// four stripes, as calls on four processors that contend for them would.
		opts = append(opts, breaker.WithStripes(4, func() uint8 { return uint8(step) }))
	}
	m := breaker.NewManager(opts...)
	events := &recorder{}
	m.AddObserver(events)
	m.AddObserver(breaker.ObserverFunc(stream.change))
	resetOnProbe := "" // a resource the observer below resets as a probe of it is taken
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		if c.Reason == breaker.RetryTimeoutElapsed && c.Resource == resetOnProbe {
			resetOnProbe = ""
			m.Reset(c.Resource)
		}
	}))
	ref := newModel(fuzzTemplateLimit)
	names := 0 // which of fuzzNames
	fuzzResource := func(b byte) string { return fuzzNames[names][b%3] }
	if err := m.LoadRules(fuzzRuleSets[0]); err != nil {
		t.Fatal(err)
	}
	ref.load(fuzzRuleSets[0])

	type open struct {
		e   *breaker.Entry
		ref *modelEntry
	}
	var entries []open
	settings := map[string]breaker.ResourceConfig{}
	leaps := 0 // centuries the clock leapt ahead, less those it leapt back: 0, 1 or 2
	// arg returns the next byte, or 0 past the end.
	arg := func() byte {
		step++
		if step < len(ops) {
			return ops[step]
		}
		return 0
	}
	for step = 1; step < len(ops); step++ {
		op := ops[step] % opCount
		switch op {
		case opAdvance, opRewind:
			d := fuzzDuration(arg())
			if op == opRewind {
				d = -d
			}
			clock.Advance(d)
			ref.now += d
		case opEnter:
			resource := fuzzResource(arg())
			e, err := m.Enter(resource)
			re, block := ref.enter(resource)
			checkBlock(t, step, resource, err, block, ref)
			if e != nil && re != nil {
				entries = append(entries, open{e, re})
			}
		case opExit, opAbandon:
			if len(entries) == 0 {
				arg()
				continue
			}
			k := int(arg()) % len(entries)
			x := entries[k]
			entries = append(entries[:k], entries[k+1:]...)
			if op == opExit {
				o, err, _ := fuzzOutcome(arg())
				x.e.SetError(err)
				x.e.Exit()
				ref.exit(x.ref, o)
			}
		case opLoad:
			set := fuzzRuleSets[int(arg())%len(fuzzRuleSets)]
			if err := m.LoadRules(set); err != nil {
				t.Fatalf("step %d: LoadRules: %v", step, err)
			}
			ref.load(set)
		case opToggle:
			if ops[0]%2 == 1 {
				slot.on = !slot.on
				ref.blocking = slot.on
			}
		case opSettings:
			a := arg()
			resource := fuzzResource(a)
			switch { // and now and then a template setting
			case a >= 0xf0:
				resource = "*"
			case a >= 0xd8:
				resource = "d*"
			}
			next := maps.Clone(settings)
			c := next[resource]
			switch k := a / 3 % 7; {
			case k < 3:
				c.Force = breaker.Force(k)
			case k < 6:
				c.MaxConcurrency = int(k - 3)
			}
			next[resource] = c
			if a/3%7 == 6 {
				delete(next, resource)
			}
			if err := m.LoadResources(next); err != nil {
				t.Fatalf("step %d: LoadResources: %v", step, err)
			}
			ref.loadSettings(next)
			settings = next
		case opReset:
			a := arg()
			resource := fuzzResource(a)
			if a >= 0xf0 {
				resetOnProbe, ref.resetOnProbe = resource, resource
				break
			}
			m.Reset(resource)
			ref.reset(resource)
		case opNames:
			names = 1 - names
		case opLeap:
			// Ahead when the argument is even, back when it is odd, but only within two
			// centuries from the start on: then no two times the model holds are 292 years
			// apart, where its time.Duration arithmetic would overflow.
			back := arg()%2 == 1
			if leaps == 0 || leaps == 2 {
				back = leaps == 2
			}
			d := fuzzLeap
			if back {
				d = -d
			}
			leaps += int(d / fuzzLeap)
			clock.Advance(d)
			ref.now += d
		case opTimeout:
			resource := fuzzResource(arg())
			next := maps.Clone(settings)
			c := next[resource]
			c.Timeout = time.Nanosecond - c.Timeout // on, or off again
			next[resource] = c
			if err := m.LoadResources(next); err != nil {
				t.Fatalf("step %d: LoadResources: %v", step, err)
			}
			ref.loadSettings(next)
			settings = next
		case opOverride:
			a := arg()
			resource, o := fuzzResource(a), fuzzOverrides[int(a/3)%len(fuzzOverrides)]
			if o.d == 0 {
				if got, want := m.EndOverride(resource), ref.endOverride(resource); got != want {
					t.Fatalf("step %d: EndOverride(%s) is %v, want %v", step, resource, got, want)
				}
				break
			}
			note := fmt.Sprint("step ", step)
			if _, err := m.Override(resource, o.force, o.d, note); err != nil {
				t.Fatalf("step %d: Override: %v", step, err)
			}
			ref.override(resource, o.force, o.d, note)
		case opNest:
			a, b := arg(), arg()
			resource, rt := fuzzResource(a), time.Duration(a>>2)*time.Millisecond
			outerErr, innerErr := fuzzOutcomes[int(b)%len(fuzzOutcomes)], fuzzOutcomes[int(b/3)%len(fuzzOutcomes)]
			ownContext := b >= 0x80 // the function drops its context: the inner call is not recognised
			cfg, _ := ref.settingsOf(resource)
			var innerGot error
			err := m.Do(context.Background(), resource, func(ctx context.Context) error {
				if cfg.Timeout > 0 {
					<-ctx.Done()
				}
				clock.Advance(rt)
				if ownContext {
					ctx = context.Background()
				}
				innerGot = m.Do(ctx, resource, func(ctx context.Context) error {
					if cfg.Timeout > 0 {
						<-ctx.Done() // past its own Timeout
					}
					clock.Advance(rt)
					return innerErr
				})
				return outerErr
			})
			outer, block := ref.enter(resource)
			if outer == nil {
				checkBlock(t, step, resource, err, block, ref)
				break
			}
			ref.now += rt
			if cfg.Timeout > 0 && !ownContext {
				ref.notCalled(resource) // its context is past the Timeout already
				if !errors.Is(innerGot, context.DeadlineExceeded) {
					t.Fatalf("step %d: a nested call past its context's deadline returned %v", step, innerGot)
				}
			} else {
				var in *modelEntry
				if !ownContext {
					in = outer
				}
				inner, block := ref.enterIn(resource, in)
				if inner == nil {
					checkBlock(t, step, resource, innerGot, block, ref)
				} else {
					ref.now += rt
					innerOutcome := modelOutcome(int(b/3) % len(fuzzOutcomes))
					if cfg.Timeout > 0 {
						innerOutcome = modelOutlived
					}
					ref.exit(inner, innerOutcome)
					if innerGot != innerErr {
						t.Fatalf("step %d: the nested call on %s returned %v, want %v", step, resource, innerGot, innerErr)
					}
				}
			}
			got := modelOutcome(int(b) % len(fuzzOutcomes))
			if cfg.Timeout > 0 {
				got = modelOutlived
			}
			ref.exit(outer, got)
			if err != outerErr {
				t.Fatalf("step %d: Do on %s returned %v, want fn's %v", step, resource, err, outerErr)
			}
		case opLull:
			d := fuzzLulls[int(arg())%len(fuzzLulls)]
			clock.Advance(d)
			ref.now += d
		case opDo:
			a := arg()
			resource, rt := fuzzResource(a), time.Duration(a>>2)*time.Millisecond
			b := arg()
			if b >= 0xf0 { // a context already done: not a call
				err := m.Do(doneCtx, resource, func(context.Context) error {
					t.Fatalf("step %d: Do on %s called fn with its context done", step, resource)
					return nil
				})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("step %d: Do on %s with its context done returned %v", step, resource, err)
				}
				ref.notCalled(resource)
				break
			}
			o, returned, want := fuzzOutcome(b)
			if b >= 0xe0 {
				returned, want = errDown, errDown
			}
			ctx, cancel := context.WithCancel(context.Background())
			cfg, _ := ref.settingsOf(resource)
			err := m.Do(ctx, resource, func(ctx context.Context) error {
				if cfg.Timeout > 0 {
					if _, ok := ctx.Deadline(); !ok {
						t.Fatalf("step %d: %s has a Timeout of %v, and its call's context no deadline", step, resource, cfg.Timeout)
					}
					<-ctx.Done() // past the Timeout, whatever it returns
				}
				clock.Advance(rt)
				if b >= 0xe0 {
					cancel() // the caller gives up, and the call fails with an error of its own
				}
				return returned
			})
			cancel()
			re, block := ref.enter(resource)
			if re != nil {
				ref.now += rt
				got := o
				switch {
				case cfg.Timeout > 0:
					got = modelOutlived
				case b >= 0xe0:
					got = modelIgnored
				}
				ref.exit(re, got)
				if err != want {
					t.Fatalf("step %d: Do on %s returned %v, want fn's %v", step, resource, err, want)
				}
			} else {
				checkBlock(t, step, resource, err, block, ref)
			}
		}
		checkSame(t, step, m, events, ref)
		if got := stream.all(); !slices.Equal(got, ref.stream) {
			t.Fatalf("step %d: what the observers heard, in order, differs\n got: %q\nwant: %q", step, got, ref.stream)
		}
	}
}

// doneCtx is the context of a call made after its caller gave up.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// streamLog is what a call observer and a state observer hear, together and in order.
type streamLog struct{ heard []string }

func (l *streamLog) call(c breaker.CallInfo) {
	switch {
	case c.NotCalled != nil:
		l.heard = append(l.heard, "call "+c.Resource+" not called")
	case c.Blocked != nil:
		l.heard = append(l.heard, "call "+c.Resource+" blocked")
	default:
		l.heard = append(l.heard, "call "+c.Resource+" ran "+c.Outcome.String())
	}
}

func (l *streamLog) change(c breaker.StateChange) { l.heard = append(l.heard, "change "+describe(c)) }

func (l *streamLog) all() []string { return l.heard }

// fuzzLeap is how far opLeap moves the clock: past the 73 years at which the library's time
// once stopped; two leaps ahead go past 146 years, where the Manager converts times from a new
// reading of the clock.
const fuzzLeap = 100 * 365 * 24 * time.Hour

// fuzzDuration spans 1ms to 64s: the low two bits pick the unit.
func fuzzDuration(b byte) time.Duration {
	unit := []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second}[b&3]
	return time.Duration(b>>2+1) * unit
}

func checkBlock(t *testing.T, step int, resource string, err error, want *modelBlock, ref *model) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("step %d: %s blocked with %v; the model lets it through (%s)", step, resource, err, ref.states())
		}
		return
	}
	var be *breaker.BlockError
	if !errors.As(err, &be) {
		t.Fatalf("step %d: %s got %v; the model blocks it (%s)", step, resource, err, ref.states())
	}
	if want.bySlot {
		if be.Rule != nil || !errors.Is(err, errSlotBlocks) || errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("step %d: %s: want a slot's block, got %+v", step, resource, be)
		}
		return
	}
	if want.cause != nil {
		if be.Rule != nil || be.Cause != want.cause || be.Resource != resource ||
			errors.Is(err, breaker.ErrOpen) != (want.cause == breaker.ErrForcedOpen) {
			t.Fatalf("step %d: %s: want a block by %v, got %+v", step, resource, want.cause, be)
		}
		return
	}
	retryAt := breakertest.Start.Add(want.retryAt)
	if be.Rule == nil || *be.Rule != *want.rule || be.State != want.state || !be.RetryAt.Equal(retryAt) ||
		be.Resource != resource || errors.Is(err, breaker.ErrOpen) == (want.ramping || want.pacing) ||
		errors.Is(err, breaker.ErrRampingUp) != want.ramping || errors.Is(err, breaker.ErrPacing) != want.pacing {
		t.Fatalf("step %d: %s: BlockError %+v (rule %+v, state %v, retry at %v); want rule %+v, state %v, retry at %v",
			step, resource, be, be.Rule, be.State, be.RetryAt.Sub(breakertest.Start), *want.rule, want.state, want.retryAt)
	}
}

func checkSame(t *testing.T, step int, m *breaker.Manager, events *recorder, ref *model) {
	t.Helper()
	got := events.all()
	if len(got) != len(ref.changes) {
		var g, w []string
		for _, c := range got {
			g = append(g, describe(c))
		}
		for _, c := range ref.changes {
			w = append(w, describe(c))
		}
		t.Fatalf("step %d: transitions differ\n got: %q\nwant: %q", step, g, w)
	}
	for i, want := range ref.changes {
		if i > 0 && got[i].Seq <= got[i-1].Seq {
			t.Fatalf("step %d: transition %d has Seq %d after %d; Seq must increase across the Manager", step, i,
				got[i].Seq, got[i-1].Seq)
		}
		if c := got[i]; c.Generation == want.Generation && c.Resource == want.Resource && c.Rule == want.Rule &&
			c.From == want.From && c.To == want.To && c.Reason == want.Reason && c.Snapshot == want.Snapshot &&
			c.At.Equal(want.At) && c.DryRun == want.DryRun && c.Note == want.Note {
			continue
		}
		t.Fatalf("step %d: transition %d is %s at %v; want %s at %v", step, i, describe(got[i]), got[i].At,
			describe(want), want.At)
	}
	var dynamic []string
	for name := range ref.templated {
		dynamic = append(dynamic, name)
	}
	slices.Sort(dynamic)
	if got := m.TemplateResources(); !slices.Equal(got, dynamic) {
		t.Fatalf("step %d: template resources %q, want %q", step, got, dynamic)
	}
	if st := m.TemplateStats(); st.Dropped != ref.dropped || st.Breakers != ref.templateBreakers() ||
		st.Settings != ref.templateSettings() {
		t.Fatalf("step %d: %+v; want %d breakers, %d with template settings, %d dropped", step, st,
			ref.templateBreakers(), ref.templateSettings(), ref.dropped)
	}
	for _, resource := range slices.Concat(fuzzNames[0][:], fuzzNames[1][:]) {
		bs := m.Breakers(resource)
		want := ref.breakersOf(resource, false)
		if len(bs) != len(want) {
			t.Fatalf("step %d: %s has %d breakers, want %d", step, resource, len(bs), len(want))
		}
		for i, b := range bs {
			if b.State() != want[i].state || b.Rule() != want[i].rule {
				t.Fatalf("step %d: %s breaker %d is %v %+v; want %v %+v", step, resource, i, b.State(),
					b.Rule(), want[i].state, want[i].rule)
			}
		}
	}
}
