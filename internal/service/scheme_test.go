package service

import (
	"os"
	"path/filepath"
	"testing"
)

func TestScheme(t *testing.T) {
	dir := t.TempDir()
	f := func(name, content, want string) {
		t.Helper()
		p := ""
		if content != "-" {
			p = filepath.Join(dir, name+".yml")
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := Scheme(p); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	f("none", "-", "http")
	f("tls files", "tls_server_config:\n  cert_file: c.pem\n  key_file: c.key\n", "https")
	f("tls inline", "tls_server_config:\n  cert: |\n    x\n  key: |\n    y\n  min_version: TLS13\n", "https")
	f("basic auth only", "basic_auth_users:\n  admin: $2y$10$x\n", "http")
	f("http2 off, no tls", "http_server_config:\n  http2: false\n", "http")
	f("unparsable", "tls_server_config: [\n", "http")
}
