package service

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ptdmon/ptdmon/internal/config"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ptdmon test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// run starts the service and returns its address and a stop function that
// reports how long the shutdown took.
func run(t *testing.T, cfg *config.Config) (string, func() (time.Duration, error)) {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, Options{Ready: func(a string) { ready <- a }}) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("service did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("service did not start in 10 s")
	}
	stopped := false
	stop := func() (time.Duration, error) {
		stopped = true
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			return time.Since(start), err
		case <-time.After(10 * time.Second):
			t.Fatal("service did not stop in 10 s")
			return 0, nil
		}
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return addr, stop
}

func oneTarget() []config.Target {
	return []config.Target{{Name: "t", URL: "http://127.0.0.1:1/metrics", Role: "prefill"}}
}

// TLS and basic auth come from exporter-toolkit's web configuration; a real
// TLS client checks the certificate and the password.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	webCfg := filepath.Join(dir, "web.yml")
	os.WriteFile(webCfg, []byte("tls_server_config:\n  cert_file: "+certFile+"\n  key_file: "+keyFile+"\nbasic_auth_users:\n  admin: "+string(hash)+"\n"), 0o600)
	addr, _ := run(t, &config.Config{Targets: oneTarget(), WebConfigFile: webCfg})

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	f := func(name, user, pass string, want int) {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "https://"+addr+"/api/v1/targets", nil)
			if user != "" {
				req.SetBasicAuth(user, pass)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", user, err)
			}
			resp.Body.Close()
			if resp.StatusCode != want || resp.TLS == nil {
				t.Errorf("user %q: status %d (TLS %v), want %d", user, resp.StatusCode, resp.TLS != nil, want)
			}
		})
	}
	f("no password", "", "", http.StatusUnauthorized)
	f("wrong password", "admin", "wrong", http.StatusUnauthorized)
	f("right password", "admin", "s3cret", http.StatusOK)
	// Plain HTTP gets no metrics.
	if resp, err := http.Get("http://" + addr + "/api/v1/targets"); err == nil {
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP answered 200")
		}
		resp.Body.Close()
	}
	// A client that does not trust the certificate is refused.
	if _, err := http.Get("https://" + addr + "/healthz"); err == nil {
		t.Errorf("untrusted certificate accepted")
	}
}

func TestAllowedHostsOnTheServer(t *testing.T) {
	addr, _ := run(t, &config.Config{Targets: oneTarget(), AllowedHosts: []string{"127.0.0.1"}})
	f := func(name, host string, want int) {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/targets", nil)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
			}
		})
	}
	f("allowed host", addr, http.StatusOK)
	f("DNS rebinding", "rebound.attacker.example:"+strings.Split(addr, ":")[1], http.StatusMisdirectedRequest)
}

// A browser with the event stream open does not hold the shutdown for the
// whole grace period.
func TestShutdownWithAnOpenStream(t *testing.T) {
	addr, stop := run(t, &config.Config{Targets: oneTarget()})
	resp, err := http.Get("http://" + addr + "/api/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	took, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if took > time.Second {
		t.Errorf("shutdown with an open stream took %v", took)
	}
}

// A listen address in use, an unreadable file_sd file and a broken web
// configuration are setup errors (exit 2), not runtime failures.
func TestSetupErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	badSD := filepath.Join(dir, "sd.json")
	os.WriteFile(badSD, []byte("[{\"targets\": [\"a:1\"], \"lables\": {}}]"), 0o600)
	badWeb := filepath.Join(dir, "web.yml")
	os.WriteFile(badWeb, []byte("tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: /nonexistent.key\n"), 0o600)
	f := func(name string, cfg *config.Config, want string) {
		t.Run(name, func(t *testing.T) {
			if cfg.Listen == "" {
				cfg.Listen = "127.0.0.1:0"
			}
			cfg.SetDefaults()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := Run(ctx, cfg, Options{})
			if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want a setup error with %q", err, want)
			}
		})
	}
	f("listen address in use", &config.Config{Listen: ln.Addr().String(), Targets: oneTarget()}, "address already in use")
	f("file_sd with an unknown field", &config.Config{FileSD: []config.FileSDEntry{{Files: []string{badSD}}}}, "lables")
	f("web configuration without its files", &config.Config{Targets: oneTarget(), WebConfigFile: badWeb}, "web configuration")
}
