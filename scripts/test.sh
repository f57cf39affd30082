#!/usr/bin/env bash
# Runs ptdmon's whole test suite: go vet, golangci-lint and the tests.
# Installs what the tests drive for real (Prometheus and promtool, headless
# Chromium, VictoriaMetrics with vmagent and vmalert, Alertmanager, and
# Python's pyzmq and msgpack, which publish forward-pass metrics through
# libzmq as the engines do) when they are missing and this user may install
# Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v vmalert >/dev/null 2>&1 || need+=(victoria-metrics)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
/usr/bin/python3 -c 'import zmq, msgpack' >/dev/null 2>&1 || need+=(python3-zmq python3-msgpack)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	else
		echo "scripts/test.sh: missing ${need[*]} (Debian packages); install them to run every test" >&2
	fi
fi

# The page embeds a checked-in copy of uPlot, so the Go tests never need npm.
# When the npm registry answers, node_modules is installed from the lock and
# internal/web checks the copy against it; otherwise that one check says why
# it did not run.
if ! command -v npm >/dev/null 2>&1; then
	echo "scripts/test.sh: npm not installed: the vendored uPlot is not re-checked against web/package-lock.json" >&2
	export PTDMON_NPM_UNAVAILABLE="npm not installed"
elif ! (cd web && timeout 180 npm ci --no-audit --no-fund --loglevel=error); then
	echo "scripts/test.sh: npm ci failed (registry unreachable?): the vendored uPlot is not re-checked against web/package-lock.json" >&2
	export PTDMON_NPM_UNAVAILABLE="npm ci failed"
fi

go vet ./...
# The lean build leaves recording and its TSDB out (-tags norecord,
# docs/performance.md): it must keep compiling. internal/record's own tests
# test the recording, so they are the ones left out of this vet.
lean=$(go list ./... | grep -v '/internal/record$')
# shellcheck disable=SC2086
go vet -tags norecord $lean

# golangci-lint, pinned (.golangci.yml says which linters and why the
# others are off); built from the Go module proxy when missing.
lint_version=v2.15.0
lint=$(go env GOBIN)
lint=${lint:-$(go env GOPATH)/bin}/golangci-lint
if ! "$lint" version 2>/dev/null | grep -q "version ${lint_version#v} "; then
	if command -v golangci-lint >/dev/null 2>&1 &&
		golangci-lint version 2>/dev/null | grep -q "version ${lint_version#v} "; then
		lint=golangci-lint
	else
		go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$lint_version"
	fi
fi
# Another run in the same tree (an editor's, say) is no reason to fail.
"$lint" run --allow-parallel-runners ./...

# Three packages at a time on two cores: the suite waits more than it
# computes (e2e's real Prometheus, the browser tests, serve's restarts),
# and at two packages the processors are busy about half of the run. The
# rate tests of e2e stay within 1% of the truth beside two other packages
# (their bound is 2%). internal/repocheck is left to the run without the
# race detector: it reads the tree in one goroutine, so the detector has
# nothing to find, and under it its regular expressions over every file
# take 35 s of a processor instead of 3.
raced=$(go list ./... | grep -v '/internal/repocheck$')
# shellcheck disable=SC2086
go test -race -p 3 -timeout 30m $raced
# Without the race detector: the verdict and capacity tests over simulated
# deployments, which under it run a sample of their cells, run every cell
# here (about 50 s on 2 cores); the ledger's hour of history at 200
# instances, a heap measurement the race detector has nothing to find in,
# runs only here; and internal/repocheck (above).
go test -count=1 ./internal/diagnose/ ./internal/ledger/ ./internal/advice/ ./internal/repocheck/
