// Package buildinfo says which build of ptdmon is running: the version in
// `ptdmon version`, in ptd_build_info and in the User-Agent of every scrape.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// version may be set at link time:
//
//	go build -ldflags "-X github.com/ptdmon/ptdmon/internal/buildinfo.version=v1.2.3" ./cmd/ptdmon
//
// Otherwise it is the module version Go recorded, "(devel)" for a build
// from a checkout.
var version string

// Info describes the running binary.
type Info struct {
	Version   string // v1.2.3, or (devel)
	Revision  string // VCS commit, "unknown" when not recorded
	Modified  bool   // built from a work tree with uncommitted changes
	GoVersion string
}

var (
	once sync.Once
	info Info
)

// Get returns the running binary's build information.
func Get() Info {
	once.Do(func() {
		info = Info{Version: version, Revision: "unknown", GoVersion: runtime.Version()}
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			if info.Version == "" {
				info.Version = "(devel)"
			}
			return
		}
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
		if info.Version == "" {
			info.Version = "(devel)"
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	})
	return info
}

// UserAgent is the User-Agent of ptdmon's scrapes: "ptdmon/<version>".
func UserAgent() string { return "ptdmon/" + Get().Version }
