// Package surfaces holds no code a program uses. Its test reads one Manager through every
// operator surface at one instant, the status page's JSON (breakerdebug), a Prometheus scrape
// (contrib/prometheus) and an OpenTelemetry collection (contrib/otel), and checks that they say
// the same. It is a module of its own so that neither exporter depends on the other.
package surfaces
