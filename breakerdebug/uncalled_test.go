package breakerdebug_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

type uncalledJSON struct {
	Uncalled []struct {
		Name       string   `json:"name"`
		Configured []string `json:"configured"`
		Nearest    string   `json:"nearest"`
	} `json:"uncalled"`
}

// Given rules for "paymnets", a typo, and calls to "payments" for a minute, when the status is
// read, then "uncalled" lists paymnets with nearest payments, and the settings of "legacy",
// which had no call and is near no called name, without one, and the settings and the
// override of names a template also covers, which are theirs all the same; not inventory,
// which was called; and the log says so once, until paymnets is called and then goes a minute
// without calls again.
func TestUncalledMisspeltRule(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder()
	m := breaker.NewManager(breaker.WithClock(clk), rec.Option(), breaker.WithLogger(slog.New(slog.DiscardHandler)))
	typo := paymentsErrors
	typo.ID, typo.Resource = "typo", "paymnets"
	tmpl := breaker.Rule{Resource: "GET *", Strategy: breaker.ErrorCount, Threshold: 3,
		MinRequestAmount: 1, RetryTimeout: time.Second}
	require.NoError(t, m.LoadRules([]breaker.Rule{inventoryRule, paymentsErrors, typo, tmpl}))
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"legacy":   {MaxConcurrency: 1},
		"GET /old": {MaxConcurrency: 2}, // settings of its own, under a template: listed
		"POST *":   {MaxConcurrency: 3},
	}))
	_, err := m.Override("POST /new", breaker.ForceOpen, time.Hour, "") // under a template: listed
	require.NoError(t, err)
	_, err = m.Override("legacy", breaker.ForceOpen, time.Hour, "INC-1")
	require.NoError(t, err)
	var logs bytes.Buffer
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec),
		breakerdebug.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	read := func() uncalledJSON {
		rec := get(h, http.MethodGet, path+"?format=json", nil)
		require.Equal(t, http.StatusOK, rec.Code)
		var st uncalledJSON
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st), rec.Body.String())
		return st
	}
	minute := func() { // payments called each second for a minute, inventory once
		for i := range 60 {
			clk.Advance(time.Second)
			call(m, "payments", succeed)
			if i == 30 {
				call(m, "inventory", succeed)
			}
		}
	}

	minute()
	clk.Advance(-time.Millisecond)
	assert.Nil(t, read().Uncalled, "not yet a minute: absent")
	clk.Advance(time.Millisecond)

	st := read()
	var names []string
	for _, u := range st.Uncalled {
		names = append(names, u.Name+" "+strings.Join(u.Configured, ",")+" "+u.Nearest)
	}
	assert.Equal(t, []string{"paymnets rules payments", "GET /old settings ", "POST /new override ",
		"legacy settings,override "}, names, "the one with a name near first, then in natural order")
	read()
	want := `msg="breakerdebug: configured name has no calls; did you mean another?" name=paymnets nearest=payments configured=rules`
	assert.Equal(t, 1, strings.Count(logs.String(), want), logs.String())
	assert.Equal(t, 4, strings.Count(logs.String(), "configured name has no calls"), logs.String())

	call(m, "paymnets", succeed) // called: not listed, and logged again once it goes uncalled
	for _, u := range read().Uncalled {
		assert.NotEqual(t, "paymnets", u.Name)
	}
	minute()
	assert.Equal(t, "paymnets", read().Uncalled[0].Name)
	assert.Equal(t, 2, strings.Count(logs.String(), want), logs.String())
}
