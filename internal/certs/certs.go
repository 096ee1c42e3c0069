// Package certs issues and checks the certificates of a hybridkv
// deployment's mutual TLS: a CA, one certificate per replica and one per
// client site (ECDSA P-256).
//
// Identity. A replica's certificate carries the URI SAN
// hybridkv://replica/<id> and the DNS SAN replica-<id>.hybridkv, which
// clients and peers dialing it verify as the server name, plus the host of
// its address. A client's carries hybridkv://client/<site>. A replica
// accepts a connection only when the verified certificate may speak for the
// node the connection's Hello claims (Authorize): a replica certificate for
// exactly that replica id, a client certificate for a client id.
package certs

import (
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
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

const scheme = "hybridkv"

// ServerName is the name a replica's certificate is verified against.
func ServerName(id uint64) string { return fmt.Sprintf("replica-%d.hybridkv", id) }

// CA is a certificate authority that issues a deployment's certificates.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Issued is a certificate with its key, PEM-encoded.
type Issued struct {
	CertPEM, KeyPEM []byte
}

// NewCA creates a self-signed CA valid until notAfter.
func NewCA(name string, notAfter time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// PEM encodes the CA's certificate and key.
func (ca *CA) PEM() (Issued, error) { return encode(ca.Cert.Raw, ca.Key) }

// Replica issues replica id's certificate, also valid for hosts (names or
// IP addresses), from notBefore to notAfter.
func (ca *CA) Replica(id uint64, hosts []string, notBefore, notAfter time.Time) (Issued, error) {
	tmpl := leaf(fmt.Sprintf("hybridkv replica %d", id), notBefore, notAfter)
	tmpl.URIs = []*url.URL{{Scheme: scheme, Host: "replica", Path: "/" + strconv.FormatUint(id, 10)}}
	tmpl.DNSNames = []string{ServerName(id)}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	return ca.issue(tmpl)
}

// Client issues the certificate of the clients at site.
func (ca *CA) Client(site string, notBefore, notAfter time.Time) (Issued, error) {
	tmpl := leaf("hybridkv client "+site, notBefore, notAfter)
	tmpl.URIs = []*url.URL{{Scheme: scheme, Host: "client", Path: "/" + url.PathEscape(site)}}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return ca.issue(tmpl)
}

func leaf(name string, notBefore, notAfter time.Time) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

func (ca *CA) issue(tmpl *x509.Certificate) (Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Issued{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return Issued{}, err
	}
	return encode(der, key)
}

func encode(der []byte, key *ecdsa.PrivateKey) (Issued, error) {
	k, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Issued{}, err
	}
	return Issued{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: k}),
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// Identity is who a certificate speaks for.
type Identity struct {
	// Replica is the replica id, or 0 for a client certificate.
	Replica uint64
	// Site is a client certificate's site.
	Site string
}

// IdentityOf reads a certificate's hybridkv identity from its URI SAN.
func IdentityOf(cert *x509.Certificate) (Identity, error) {
	for _, u := range cert.URIs {
		if u.Scheme != scheme {
			continue
		}
		rest := strings.TrimPrefix(u.Path, "/")
		switch u.Host {
		case "replica":
			id, err := strconv.ParseUint(rest, 10, 64)
			if err != nil || id == 0 {
				return Identity{}, fmt.Errorf("bad replica identity %q", u)
			}
			return Identity{Replica: id}, nil
		case "client":
			site, err := url.PathUnescape(rest)
			if err != nil {
				return Identity{}, fmt.Errorf("bad client identity %q", u)
			}
			return Identity{Site: site}, nil
		}
	}
	return Identity{}, errors.New("the certificate names no hybridkv replica or client")
}

// Authorize reports whether a verified certificate may speak for node
// claimed: a replica's for exactly that replica, a client's for any client.
func Authorize(cert *x509.Certificate, claimed wire.NodeID) error {
	who, err := IdentityOf(cert)
	if err != nil {
		return err
	}
	switch {
	case who.Replica != 0 && uint64(claimed) == who.Replica:
		return nil
	case who.Replica != 0:
		return fmt.Errorf("certificate of replica %d used to claim node %d", who.Replica, claimed)
	case claimed >= wire.FirstClientID:
		return nil
	}
	return fmt.Errorf("client certificate (site %q) used to claim replica %d", who.Site, claimed)
}

// Files names a process's CA, certificate and key files.
type Files struct {
	CA, Cert, Key string
}

// Load reads the files: the process's certificate and the CA pool that
// verifies its peers.
func (f Files) Load() (tls.Certificate, *x509.CertPool, error) {
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("tls: %w", err)
	}
	raw, err := os.ReadFile(f.CA)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("tls: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return tls.Certificate{}, nil, fmt.Errorf("tls: no certificate in CA file %s", f.CA)
	}
	return cert, pool, nil
}

// ServerConfig is the TLS configuration a replica accepts connections
// with: TLS 1.3, a client certificate required and verified against pool.
func ServerConfig(cert tls.Certificate, pool *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}
}

// ClientConfig is the TLS configuration for dialing replica id: TLS 1.3,
// the replica's certificate verified against pool and its ServerName.
func ClientConfig(cert tls.Certificate, pool *x509.CertPool, id uint64) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ServerName:   ServerName(id),
	}
}
