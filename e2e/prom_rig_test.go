package e2e

import (
	"context"
	"path/filepath"
	"testing"
)

// startPrometheus runs Prometheus on configFile with its storage in dir until
// the test ends, and returns its URL once it answers /-/ready.
func startPrometheus(t *testing.T, ctx context.Context, bin, dir, configFile string) string {
	t.Helper()
	addr := "127.0.0.1:" + freePort(t)
	startProc(t, ctx, bin, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	u := "http://" + addr
	waitReady(t, u+"/-/ready")
	return u
}
