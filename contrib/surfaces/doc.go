// Package surfaces holds no code a program uses. Its test reads one Manager through every
// operator surface at one instant, the status page's JSON and its event stream (breakerdebug),
// a Prometheus scrape (contrib/prometheus) and an OpenTelemetry collection (contrib/otel), and
// checks that they say the same, the last minute of calls, each name's side, the calls a
// dependency refused apart from those that failed, and the names configured and not called
// included, on clocks at any time. It is a module of its own so that neither exporter
// depends on the other.
package surfaces
