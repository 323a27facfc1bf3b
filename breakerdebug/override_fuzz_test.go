package breakerdebug_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// Any body a client sends gets 200 with the change as installed, or a refusal (400 or 413)
// with a JSON error and nothing changed; none makes the handler panic.
func FuzzOverrideBody(f *testing.F) {
	for _, seed := range []string{
		`{"resource": "inventory", "action": "open", "duration": "10m", "note": "INC-42"}`,
		`{"resource": "inventory", "action": "closed", "duration": "1h"}`,
		`{"resource": "inventory", "action": "auto", "duration": "24h"}`,
		`{"resource": "inventory", "action": "end"}`,
		`{"resource": "inventory", "action": "reset"}`,
		`{"resource": "inventory", "action": "open", "duration": "24h0m0.000000001s"}`,
		`{"resource": "inventory", "action": "open", "duration": "-1s"}`,
		`{"resource": "inventory", "action": "open", "duration": "10m", "Resource": "x"}`,
		`{"resource": "inventory", "resource": "inventory"}`, `{"resource": null}`, `[]`, `{}`, ``, `{"a":`,
		`{"resource": "\u00e9\ud800", "action": "open", "duration": "1s"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		w := newWritable(t, nil, inventoryRule)
		rec := post(w.h, body)
		switch rec.Code {
		case http.StatusOK:
			var out map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatalf("a 200 answer that is not JSON: %q", rec.Body)
			}
			for _, o := range overridesOf(w.m) {
				if o.Until.Sub(o.At) <= 0 || o.Until.Sub(o.At) > 24*time.Hour || len(o.Note) > 256 {
					t.Fatalf("an override out of bounds was installed: %+v", o)
				}
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			errorOf(t, rec)
			w.assertUnchanged(t)
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}
