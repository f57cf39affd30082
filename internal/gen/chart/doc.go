// Package chart holds the tests of deploy/helm/ptdmon, the Helm chart
// internal/gen writes: they render it with Helm's own engine in several
// value sets and check every object. Its own package keeps Helm out of
// internal/gen's test binary.
package chart
