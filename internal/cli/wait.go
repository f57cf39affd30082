package cli

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"time"
)

// WaitForFile waits up to d for path, named by flagName, to exist: so that
// `ptdmon serve -config` can start beside the `ptdmon sim -config-out` that
// writes it. A file still missing at the end is a usage error.
func WaitForFile(flagName, path string, d time.Duration, log *slog.Logger) error {
	deadline := time.Now().Add(d)
	said := false
	for {
		_, err := os.Stat(path)
		if !errors.Is(err, fs.ErrNotExist) {
			return nil // present, or an error config.Load reports better
		}
		if !time.Now().Before(deadline) {
			if d > 0 {
				return Usagef("%s %s: no such file after waiting %v", flagName, path, d)
			}
			return Usagef("%s %s: no such file", flagName, path)
		}
		if !said {
			log.Info("waiting for the configuration file", "path", path, "up_to", d)
			said = true
		}
		time.Sleep(100 * time.Millisecond)
	}
}
