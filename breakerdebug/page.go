package breakerdebug

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"net/http"
)

// The page is a template for its skeleton, with its style and script inline. The script
// renders the tables from the status embedded in the page, then from the event stream.
var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string

	page = template.Must(template.New("page").Parse(pageHTML))

	// contentSecurityPolicy lets the page run only its own script and style, fetch only from
	// its own origin, and load nothing else.
	contentSecurityPolicy = "default-src 'none'; script-src " + sourceHash(pageJS) +
		"; style-src " + sourceHash(pageCSS) +
		"; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"
)

// pageData is what the template fills in. Status goes through html/template's escaping, as
// JSON inside a script element.
type pageData struct {
	Style  template.CSS
	Script template.JS
	Status *status
}

// sourceHash is the CSP source expression that allows the inline script or style src.
func sourceHash(src string) string {
	sum := sha256.Sum256([]byte(src))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func serveHTML(w http.ResponseWriter, r *http.Request, st *status) {
	var body bytes.Buffer
	err := page.Execute(&body, pageData{
		Style:  template.CSS(pageCSS),
		Script: template.JS(pageJS),
		Status: st,
	})
	if err != nil {
		http.Error(w, "breakerdebug: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	write(w, r, body.Bytes())
}
