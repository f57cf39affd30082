#!/usr/bin/env bash
# Takes the screenshots of docs/screenshots again (every demo scenario's
# page, and the instance table of a fleet) in headless Chromium, and records
# which page they show (docs/screenshots/page.sha256), which
# TestScreenshotsShowThisPage (internal/web) compares with the page's
# sources. Run it after a change to internal/web/assets.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -count=1 -run 'TestScenarioScreenshots$|TestFleetTableInChromium$' ./internal/web -update-screenshots
