package inject

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/internal/store"
)

// Migrations create the table of the sandboxes' CAs; the composition root
// passes them to store.Open.
var Migrations = []store.Migration{{Name: "egress-cas-1", SQL: `CREATE TABLE egress_cas (
		sandbox    TEXT PRIMARY KEY,
		cert       BLOB NOT NULL,
		key        BLOB NOT NULL,
		created_at INTEGER NOT NULL
	)`}}

// Validity. A sandbox lives at most a day per timeout, but timeouts can
// be extended; a CA outliving its sandbox is deleted with it.
const (
	caValidity   = 366 * 24 * time.Hour
	leafValidity = 7 * 24 * time.Hour
	clockSkew    = time.Hour
	maxLeaves    = 64 // per sandbox: leaves are made only for inject hosts (at most MaxRules)
)

// CA is one sandbox's certificate authority.
type CA struct {
	Sandbox string
	Cert    *x509.Certificate
	PEM     string // the certificate, for the sandbox's bundle
	key     *ecdsa.PrivateKey
	leafKey *ecdsa.PrivateKey // shared by the CA's leaves, never stored (guarded by mu)

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// newCA makes a CA for sandbox id.
func newCA(id string, now time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{Organization: []string{"Paddock"}, CommonName: "Paddock egress CA for " + id},
		NotBefore:    now.Add(-clockSkew), NotAfter: now.Add(caValidity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return caFrom(id, der, key)
}

func caFrom(id string, der []byte, key *ecdsa.PrivateKey) (*CA, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Sandbox: id, Cert: cert, PEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		key: key, leaves: map[string]*tls.Certificate{}}, nil
}

// Leaf returns a server certificate for name signed by the CA (cached,
// renewed a day before it expires).
func (ca *CA) Leaf(name string, now time.Time) (*tls.Certificate, error) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if c := ca.leaves[name]; c != nil && now.Add(24*time.Hour).Before(c.Leaf.NotAfter) {
		return c, nil
	}
	if len(ca.leaves) >= maxLeaves {
		clear(ca.leaves)
	}
	if ca.leafKey == nil { // made at the first leaf: off the create path
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		ca.leafKey = k
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(leafValidity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: now.Add(-clockSkew), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca.Cert, &ca.leafKey.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("certificate for %s: %w", name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: ca.leafKey, Leaf: leaf}
	ca.leaves[name] = c
	return c, nil
}

// CAStore keeps the sandboxes' CAs: in memory, and in the database with
// the private key sealed by the secrets key, so that a restarted server
// still holds the CA its running sandboxes trust.
type CAStore struct {
	db  *sql.DB
	key *secret.Key
	now func() time.Time

	mu  sync.Mutex
	cas map[string]*CA
	gen sync.Map // id → *sync.Mutex: one generation per sandbox at a time
}

// NewCAStore returns a CA store on db (which holds Migrations' table).
func NewCAStore(db *sql.DB, key *secret.Key) *CAStore {
	return &CAStore{db: db, key: key, now: time.Now, cas: map[string]*CA{}}
}

func caAAD(id string) []byte { return []byte("paddock egress ca v1\x00" + id) }

// Ensure returns sandbox id's CA, making (and recording) it on first use.
func (s *CAStore) Ensure(ctx context.Context, id string) (*CA, error) {
	if ca, err := s.Get(ctx, id); err == nil || errs.CodeOf(err) != errs.CodeNotFound {
		return ca, err
	}
	lk, _ := s.gen.LoadOrStore(id, &sync.Mutex{})
	l := lk.(*sync.Mutex)
	l.Lock()
	defer l.Unlock()
	defer s.gen.Delete(id)
	if ca, err := s.Get(ctx, id); err == nil || errs.CodeOf(err) != errs.CodeNotFound {
		return ca, err
	}
	now := s.now()
	ca, err := newCA(id, now)
	if err != nil {
		return nil, fmt.Errorf("egress CA for %s: %w", id, err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(ca.key)
	if err != nil {
		return nil, fmt.Errorf("egress CA for %s: %w", id, err)
	}
	sealed := s.key.Seal(caAAD(id), pk)
	clear(pk)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO egress_cas (sandbox, cert, key, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(sandbox) DO UPDATE SET cert=excluded.cert, key=excluded.key, created_at=excluded.created_at`,
		id, ca.Cert.Raw, sealed, now.UnixNano()); err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the sandbox's egress CA cannot be recorded")
	}
	s.mu.Lock()
	s.cas[id] = ca
	s.mu.Unlock()
	return ca, nil
}

// Get returns sandbox id's CA (not_found if it has none).
func (s *CAStore) Get(ctx context.Context, id string) (*CA, error) {
	s.mu.Lock()
	ca := s.cas[id]
	s.mu.Unlock()
	if ca != nil {
		return ca, nil
	}
	var der, sealed []byte
	err := s.db.QueryRowContext(ctx, `SELECT cert, key FROM egress_cas WHERE sandbox=?`, id).Scan(&der, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.NotFound("the sandbox has no egress CA")
	}
	if err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the sandbox's egress CA cannot be read")
	}
	pk, err := s.key.Open(caAAD(id), sealed)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, fmt.Errorf("egress CA of %s: %w", id, err), "the sandbox's egress CA cannot be read")
	}
	k, err := x509.ParsePKCS8PrivateKey(pk)
	clear(pk)
	ek, ok := k.(*ecdsa.PrivateKey)
	if err != nil || !ok {
		return nil, errs.Wrap(errs.CodeInternal, fmt.Errorf("egress CA of %s: bad key: %v", id, err), "the sandbox's egress CA cannot be read")
	}
	if ca, err = caFrom(id, der, ek); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, fmt.Errorf("egress CA of %s: %w", id, err), "the sandbox's egress CA cannot be read")
	}
	s.mu.Lock()
	if cur := s.cas[id]; cur != nil {
		ca = cur
	} else {
		s.cas[id] = ca
	}
	s.mu.Unlock()
	return ca, nil
}

// Sweep forgets the CAs of sandboxes the store no longer knows (deleted,
// expired, failed and cleaned up) and returns how many.
func (s *CAStore) Sweep(ctx context.Context) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM egress_cas WHERE sandbox NOT IN (SELECT id FROM sandboxes)`)
	if err != nil {
		return 0, fmt.Errorf("sweep egress CAs: %w", err)
	}
	n, _ := res.RowsAffected()
	s.mu.Lock()
	ids := make([]string, 0, len(s.cas))
	for id := range s.cas {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		var one int
		err := s.db.QueryRowContext(ctx, `SELECT 1 FROM egress_cas WHERE sandbox=?`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			s.mu.Lock()
			delete(s.cas, id)
			s.mu.Unlock()
		}
	}
	return int(n), nil
}

// SweepEvery sweeps at once and then every interval until ctx ends.
func (s *CAStore) SweepEvery(ctx context.Context, interval time.Duration, log func(n int, err error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := s.Sweep(ctx)
		if log != nil && (n > 0 || err != nil) && ctx.Err() == nil {
			log(n, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
