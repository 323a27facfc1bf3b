// Package strictjson holds what the rule and document parsers need to read JSON more strictly
// than encoding/json does: keys written twice or in another case, trailing data, and errors
// that say where in the input they lie.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// IsNull reports whether b is JSON null.
func IsNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// AtEOF reports whether only white space is left in dec.
func AtEOF(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}

// SplitArray splits a JSON array into its elements, which are each valid JSON. JSON null
// gives no elements. what names the array in errors.
func SplitArray(data []byte, what string) ([]json.RawMessage, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			return nil, fmt.Errorf("breaker: %s are not valid JSON: %v (at %s)", what, err, Position(data, syntax))
		case errors.As(err, &typ):
			return nil, fmt.Errorf("breaker: %s must be a JSON array, got %s", what, typ.Value)
		}
		return nil, fmt.Errorf("breaker: %s are not valid JSON: %w", what, err)
	}
	return raws, nil
}

// Position describes where in data the *json.SyntaxError err lies: the line and column (both
// from 1, the column counted in characters) of the byte at fault, and the byte offset that
// encoding/json reports, which is just after that byte. Input that ends too soon is at fault
// just after its last byte.
func Position(data []byte, err *json.SyntaxError) string {
	i := int(min(max(err.Offset-1, 0), int64(len(data))))
	if strings.Contains(err.Error(), "end of JSON input") {
		i = len(data)
	}
	lineStart := bytes.LastIndexByte(data[:i], '\n') + 1
	line := bytes.Count(data[:lineStart], []byte{'\n'}) + 1
	column := utf8.RuneCount(data[lineStart:i]) + 1
	return fmt.Sprintf("line %d, column %d, byte offset %d", line, column, err.Offset)
}

// DescribeType says in words what JSON value a Go type takes.
func DescribeType(t reflect.Type) string {
	if t == nil {
		return "a JSON value of another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64:
		return "a finite number"
	case reflect.Bool:
		return "true or false"
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		bits := t.Bits()
		return fmt.Sprintf("a whole number in [%d, %d]", -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return fmt.Sprintf("a whole number in [0, %d]", uint64(math.MaxUint64)>>(64-t.Bits()))
	}
	return "a JSON value of another type"
}

// Keys returns the JSON names of the fields of struct type t, from their json tags.
func Keys(t reflect.Type) []string {
	keys := make([]string, 0, t.NumField())
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		keys = append(keys, name)
	}
	return keys
}

// Object is the keys of a JSON object in order, and the value of one of them when that is a
// string (for errors).
type Object struct {
	Keys  []string
	Value string
}

// ObjectKeys reads the keys of the JSON object b, and the value of the key named field when it
// is a string. It stops at the first syntax error, and returns no keys for a value that is not
// an object: the decoder that follows reports both.
func ObjectKeys(b []byte, field string) (obj Object) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return obj
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return obj
		}
		obj.Keys = append(obj.Keys, key)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return obj
		}
		if key == field {
			_ = json.Unmarshal(value, &obj.Value) // a value that is not a string is left ""
		}
	}
	return obj
}

// CheckKeys finds what encoding/json would let through in silence: a key written twice in a
// JSON object (it keeps the last) and a key that is none of known but equals one of them when
// case is ignored (it takes it for that field). Keys are compared as encoding/json reads them,
// escapes undone, so "resourc\u0065" is "resource". It returns the key at fault and why, or
// "", "".
func CheckKeys(keys, known []string) (key, reason string) {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			return k, "is written twice: write each field once"
		}
		seen[k] = true
	}
	for _, k := range keys {
		if slices.Contains(known, k) {
			continue
		}
		for _, field := range known {
			if strings.EqualFold(k, field) {
				return k, fmt.Sprintf("matches the field %q only when case is ignored: names must match exactly", field)
			}
		}
	}
	return "", ""
}
