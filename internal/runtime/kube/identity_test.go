package kube

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/guestapi"
)

func testIdentity(t testing.TB) *identity {
	t.Helper()
	c, k, err := newCA()
	if err != nil {
		t.Fatal(err)
	}
	id, err := parseIdentity(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// serve runs a TLS server configured as the Pod guest is (guest's
// readPodCreds: client certificates of the CA, CN paddock-host) with the
// given server certificate, and returns its address.
func serve(t *testing.T, id *identity, certPEM, keyPEM []byte) string {
	t.Helper()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: id.pool, ClientAuth: tls.RequireAndVerifyClientCert,
		MinVersion: tls.VersionTLS13,
		VerifyPeerCertificate: func(_ [][]byte, chains [][]*x509.Certificate) error {
			if chains[0][0].Subject.CommonName != guestapi.PodClientName {
				return errSomething
			}
			return nil
		}}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Write([]byte("ok"))
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

var errSomething = &net.AddrError{Err: "not the host"}

func dial(addr string, conf *tls.Config) error {
	c, err := tls.Dial("tcp", addr, conf)
	if err != nil {
		return err
	}
	defer c.Close()
	b := make([]byte, 2)
	_, err = c.Read(b)
	return err
}

// TestMutualTLS: the host reaches the guest of the sandbox it names, and
// nothing else passes: not another sandbox's guest (an IP reused by
// another Pod), not a workload without the host's key, not a guest
// certificate used as a client certificate, not a foreign CA.
func TestMutualTLS(t *testing.T) {
	id := testIdentity(t)
	gc, gk, err := id.guestCert("sb-aaa")
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, id, gc, gk)
	if err := dial(addr, id.clientTLS("sb-aaa")); err != nil {
		t.Fatalf("host → its guest: %v", err)
	}
	if err := dial(addr, id.clientTLS("sb-bbb")); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("host expecting sb-bbb accepted sb-aaa's guest: %v", err)
	}
	noCert := id.clientTLS("sb-aaa")
	noCert.Certificates = nil
	if err := dial(addr, noCert); err == nil {
		t.Error("a client without the host's certificate got an answer")
	}
	// A guest's own key as a client certificate (a compromised sandbox
	// calling another sandbox's guest).
	other, _ := tls.X509KeyPair(gc, gk)
	asClient := id.clientTLS("sb-aaa")
	asClient.Certificates = []tls.Certificate{other}
	if err := dial(addr, asClient); err == nil {
		t.Error("a guest certificate was accepted as the host's client certificate")
	}
	foreign := testIdentity(t)
	if err := dial(addr, foreign.clientTLS("sb-aaa")); err == nil {
		t.Error("a client certificate of a foreign CA was accepted")
	}
}

func TestParseIdentityRefusesJunk(t *testing.T) {
	c, k, _ := newCA()
	for _, tc := range []struct{ name, cert, key string }{
		{"empty", "", ""},
		{"swapped", string(k), string(c)},
		{"garbage pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", string(k)},
	} {
		if _, err := parseIdentity([]byte(tc.cert), []byte(tc.key)); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	// A leaf (not a CA) is refused.
	id := testIdentity(t)
	lc, lk, _ := id.guestCert("sb-x")
	if _, err := parseIdentity(lc, lk); err == nil {
		t.Error("a leaf certificate was accepted as the CA")
	}
}

// FuzzParseIdentity: the CA Secret is read from the cluster; whatever it
// holds, parsing fails cleanly or yields a usable identity.
func FuzzParseIdentity(f *testing.F) {
	c, k, _ := newCA()
	f.Add(c, k)
	f.Add([]byte{}, []byte{})
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 0x03, 0x02, 0x01, 0x01}}), k)
	f.Fuzz(func(t *testing.T, cert, key []byte) {
		id, err := parseIdentity(cert, key)
		if err == nil && (id.caCert == nil || len(id.host.Certificate) == 0) {
			t.Fatal("identity without CA or host certificate")
		}
	})
}
