//go:build linux

package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
)

func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func writeCreds(t *testing.T, dir string, ca []byte) {
	t.Helper()
	c, k := selfSigned(t)
	cfg, _ := json.Marshal(guestapi.PodConfig{Version: guestapi.Version, ID: "sb-x"})
	for name, b := range map[string][]byte{guestapi.PodConfigFile: cfg, guestapi.PodCertFile: c, guestapi.PodKeyFile: k, guestapi.PodCAFile: ca} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o400); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadPodCredsDeletesThem: after the guest read its credentials,
// nothing of them is left on the (memory-backed) volume for a workload.
func TestReadPodCredsDeletesThem(t *testing.T) {
	dir := t.TempDir()
	ca, _ := selfSigned(t)
	writeCreds(t, dir, ca)
	cfg, conf, err := readPodCreds(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ID != "sb-x" || len(conf.Certificates) != 1 || conf.ClientCAs == nil {
		t.Fatalf("config %+v", cfg)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("credentials left behind: %v", ents)
	}
	if conf.ClientAuth.String() != "RequireAndVerifyClientCert" {
		t.Errorf("client auth %v: the guest must demand the host's certificate", conf.ClientAuth)
	}
}

func TestReadPodCredsRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	writeCreds(t, dir, []byte("not a certificate"))
	if _, _, err := readPodCreds(dir); err == nil {
		t.Error("a CA file without a certificate was accepted")
	}
	if _, _, err := readPodCreds(t.TempDir()); err == nil {
		t.Error("missing credentials were accepted")
	}
}

// TestPodInitHidesCredentials: pod-init hands the credentials over owned
// by a uid no workload has, readable by that owner only, in a directory
// only root may enter.
func TestPodInitHidesCredentials(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: chown to the credentials' owner")
	}
	from, to := t.TempDir(), t.TempDir()
	ca, _ := selfSigned(t)
	writeCreds(t, from, ca)
	bin := filepath.Join(t.TempDir(), "paddock-guest")
	if code := PodInit([]string{"-from", from, "-bin", bin, "-creds", to}); code != 0 {
		t.Fatalf("pod-init exited %d", code)
	}
	if st, err := os.Stat(bin); err != nil || st.Mode().Perm() != 0o555 {
		t.Errorf("guest binary: %v %v", st, err)
	}
	for _, n := range []string{guestapi.PodConfigFile, guestapi.PodCertFile, guestapi.PodKeyFile, guestapi.PodCAFile} {
		st, err := os.Stat(filepath.Join(to, n))
		if err != nil {
			t.Fatal(err)
		}
		if uid := st.Sys().(*syscall.Stat_t).Uid; uid != credsOwner {
			t.Errorf("%s owned by %d, want %d", n, uid, credsOwner)
		}
		if st.Mode().Perm() != 0o400 {
			t.Errorf("%s mode %v", n, st.Mode())
		}
	}
	if st, _ := os.Stat(to); st.Mode().Perm() != 0o700 {
		t.Errorf("credentials directory mode %v", st.Mode())
	}
}
