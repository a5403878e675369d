package kube

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// identity is the runtime's own CA, which issues the host's client
// certificate and every guest's server certificate, and which nothing
// else trusts. It lives in a Secret of the namespace, so that any
// replica or restart of Paddock talks to the Pods it finds.
type identity struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	pool   *x509.CertPool
	host   tls.Certificate
}

const (
	caCertKey = "ca.crt"
	caKeyKey  = "ca.key"
	// guestCertLife bounds a sandbox's certificate; sandboxes live a day
	// at most (the manager's ceiling on timeouts).
	guestCertLife = 30 * 24 * time.Hour
	hostCertLife  = 30 * 24 * time.Hour
	caLife        = 10 * 365 * 24 * time.Hour
)

// loadIdentity reads the CA Secret, creating it on first use.
func loadIdentity(ctx context.Context, cs kubernetes.Interface, ns, name string, labels map[string]string) (*identity, error) {
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		certPEM, keyPEM, gerr := newCA()
		if gerr != nil {
			return nil, gerr
		}
		sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{caCertKey: certPEM, caKeyKey: keyPEM}}
		created, cerr := cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(cerr) { // another replica was first
			sec, err = cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		} else {
			sec, err = created, cerr
			if err != nil {
				return nil, apiErr(ns, "create", "secrets", err)
			}
		}
	}
	if err != nil {
		return nil, apiErr(ns, "get", "secrets", err)
	}
	return parseIdentity(sec.Data[caCertKey], sec.Data[caKeyKey])
}

func parseIdentity(certPEM, keyPEM []byte) (*identity, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("kube: the CA secret holds no PEM certificate and key")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("kube: CA certificate: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("kube: CA key: %w", err)
	}
	if !cert.IsCA || time.Now().After(cert.NotAfter) {
		return nil, errors.New("kube: the CA certificate is not a CA or has expired")
	}
	id := &identity{caCert: cert, caKey: key, caPEM: certPEM, pool: x509.NewCertPool()}
	id.pool.AddCert(cert)
	hostCert, hostKey, err := id.issue(guestapi.PodClientName, nil, x509.ExtKeyUsageClientAuth, hostCertLife)
	if err != nil {
		return nil, err
	}
	if id.host, err = tls.X509KeyPair(hostCert, hostKey); err != nil {
		return nil, err
	}
	return id, nil
}

func newCA() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "paddock-kube-runtime-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(caLife),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
		MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return encodePair(der, key)
}

// issue signs a leaf for cn (and dns names) usable for one purpose only:
// a guest's server certificate cannot act as the host's client one.
func (id *identity) issue(cn string, dns []string, use x509.ExtKeyUsage, life time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
		NotBefore: now.Add(-5 * time.Minute), NotAfter: now.Add(life),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{use},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, id.caCert, &key.PublicKey, id.caKey)
	if err != nil {
		return nil, nil, err
	}
	return encodePair(der, key)
}

// guestCert issues sandbox id's server certificate.
func (id *identity) guestCert(sandbox string) (certPEM, keyPEM []byte, err error) {
	return id.issue(sandbox, []string{guestapi.PodServerName(sandbox)}, x509.ExtKeyUsageServerAuth, guestCertLife)
}

// clientTLS is the host's side of a connection to sandbox id's guest.
func (id *identity) clientTLS(sandbox string) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{id.host},
		RootCAs:      id.pool,
		ServerName:   guestapi.PodServerName(sandbox),
		MinVersion:   tls.VersionTLS13,
	}
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n.Add(n, big.NewInt(1))
}

// encodePair is a certificate (DER) and its key as PEM.
func encodePair(der []byte, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}
