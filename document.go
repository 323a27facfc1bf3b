package breaker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/halfopen/breaker/internal/strictjson"
)

// Document is what a rule file or a config service holds for a Manager: rules, resource
// settings, or both. ParseDocument reads it; Manager.LoadDocument installs it.
type Document struct {
	// Rules replace the Manager's rules when HasRules is set.
	Rules    []Rule
	HasRules bool
	// Resources replace the Manager's resource settings when HasResources is set.
	Resources    map[string]ResourceConfig
	HasResources bool
}

// ParseDocument reads a JSON document of rules and resource settings:
//
//	{"rules": [RULE, ...],
//	 "resources": {"payments": {"timeout": "2s", "maxConcurrency": 20, "force": "open"}}}
//
// Each rule is in the form ParseRules reads. A resource's settings hold "timeout" (a Go
// duration string), "maxConcurrency" (a whole number) and "force" ("auto", "open" or "closed"),
// each optional. Either part may be left out, and a document replaces only what it holds. A
// bare JSON array, or null, is a document of rules alone, as ParseRules reads it.
//
// Keys must match exactly and appear once, at every level. A rule or a resource's settings
// that cannot be decoded or is invalid gives a *RuleError (wrapping ErrInvalidRule) that names
// the rule's index or the resource, and the key; malformed JSON gives an error with its line and
// column.
func ParseDocument(data []byte) (Document, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' || strictjson.IsNull(trimmed) {
		rules, err := ParseRules(data)
		return Document{Rules: rules, HasRules: err == nil}, err
	}
	var j struct {
		Rules     json.RawMessage `json:"rules"`
		Resources json.RawMessage `json:"resources"`
	}
	if err := checkKeys(strictjson.ObjectKeys(data, "resource"), documentKeys); err != nil {
		return Document{}, documentError(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Document{}, documentError(decodeError(err, data, "document", "", nil))
	}
	if !strictjson.AtEOF(dec) {
		return Document{}, fmt.Errorf("breaker: document is not valid JSON: data after its object")
	}
	var d Document
	if j.Rules != nil {
		rules, err := ParseRules(j.Rules)
		if err != nil {
			return Document{}, err
		}
		d.Rules, d.HasRules = rules, true
	}
	if j.Resources != nil {
		cfg, err := parseResources(j.Resources)
		if err != nil {
			return Document{}, err
		}
		d.Resources, d.HasResources = cfg, true
	}
	return d, nil
}

// documentKeys are the keys of a document's top level.
var documentKeys = []string{"rules", "resources"}

// documentError rewords an error about the document's top level, which is not a rule.
func documentError(err error) error {
	re, ok := err.(*RuleError)
	switch {
	case !ok:
		return err
	case re.Field == "":
		return fmt.Errorf("breaker: document %s", re.Reason)
	case strings.HasPrefix(re.Reason, "is not a rule field"):
		return fmt.Errorf(`breaker: document: %q is not a document key: the keys are "rules" and "resources"`, re.Field)
	}
	return fmt.Errorf("breaker: document: key %q %s", re.Field, re.Reason)
}

// resourceJSON is the JSON form of a ResourceConfig.
type resourceJSON struct {
	Timeout        *string `json:"timeout,omitempty"`
	MaxConcurrency int     `json:"maxConcurrency,omitempty"`
	Force          *string `json:"force,omitempty"`
}

var resourceKeys = strictjson.Keys(reflect.TypeFor[resourceJSON]())

// resourceFields names the fields of a resource's settings, for errors.
const resourceFields = "timeout, maxConcurrency, force"

// forceNames lists the names of Force, for errors.
const forceNames = `"auto", "open" or "closed"`

// parseResources reads the "resources" object of a document.
func parseResources(data []byte) (map[string]ResourceConfig, error) {
	if strictjson.IsNull(data) {
		return map[string]ResourceConfig{}, nil
	}
	if err := checkKeys(strictjson.ObjectKeys(data, "resource"), nil); err != nil {
		re := err.(*RuleError)
		return nil, &RuleError{Index: -1, Resource: re.Field, Reason: "has settings twice: write each resource once"}
	}
	var raws map[string]json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("breaker: resources must be a JSON object of settings by resource name: %v", err)
	}
	out := make(map[string]ResourceConfig, len(raws))
	for _, name := range slices.Sorted(maps.Keys(raws)) {
		c, err := decodeResource(name, raws[name])
		if err != nil {
			return nil, err
		}
		out[name] = c
	}
	return out, nil
}

// decodeResource reads and validates the settings of resource name.
func decodeResource(name string, data []byte) (ResourceConfig, error) {
	invalid := func(field, reason string) error {
		return &RuleError{Index: -1, Resource: name, Field: field, Reason: reason}
	}
	if strictjson.IsNull(data) {
		return ResourceConfig{}, invalid("", "must be a JSON object of settings, got null")
	}
	if err := checkKeys(strictjson.ObjectKeys(data, "resource"), resourceKeys); err != nil {
		re := *err.(*RuleError)
		re.Resource = name
		return ResourceConfig{}, &re
	}
	var j resourceJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		err = decodeError(err, data, "resource settings", name, map[string]string{"timeout": durationWant})
		if re, ok := err.(*RuleError); ok && strings.HasPrefix(re.Reason, "is not a rule field") {
			return ResourceConfig{}, invalid(re.Field, "is not a resource setting; the settings are "+resourceFields)
		}
		return ResourceConfig{}, err
	}
	c := ResourceConfig{MaxConcurrency: j.MaxConcurrency}
	if j.Timeout != nil {
		d, err := time.ParseDuration(*j.Timeout)
		if err != nil {
			return ResourceConfig{}, invalid("timeout", fmt.Sprintf("must be %s, got %q", durationWant, *j.Timeout))
		}
		c.Timeout = d
	}
	if j.Force != nil {
		f, ok := parseForce(*j.Force)
		if !ok {
			return ResourceConfig{}, invalid("force", fmt.Sprintf("must be %s, got %q", forceNames, *j.Force))
		}
		c.Force = f
	}
	if reason, field := c.check(name); reason != "" {
		return ResourceConfig{}, invalid(jsonName(field), reason)
	}
	return c, nil
}

// jsonName is the JSON key of a ResourceConfig field: its Go name with a lower-case initial.
func jsonName(field string) string {
	if field == "" {
		return ""
	}
	return string(field[0]|0x20) + field[1:]
}

func parseForce(name string) (Force, bool) {
	for _, f := range []Force{Auto, ForceOpen, ForceClosed} {
		if name == f.String() {
			return f, true
		}
	}
	return 0, false
}

// MarshalJSON writes the settings in the form ParseDocument reads, leaving out the fields at
// their zero value: {"timeout":"2s","maxConcurrency":20,"force":"open"}.
func (c ResourceConfig) MarshalJSON() ([]byte, error) {
	if c.Force > ForceClosed {
		return nil, fmt.Errorf("breaker: cannot marshal unknown force %d: want %s", c.Force, forceNames)
	}
	j := resourceJSON{Timeout: optionalDuration(c.Timeout), MaxConcurrency: c.MaxConcurrency}
	if c.Force != Auto {
		name := c.Force.String()
		j.Force = &name
	}
	return json.Marshal(j)
}
