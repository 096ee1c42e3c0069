package certs

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Layout names the files of a deployment's certificates in one directory:
// ca.pem; replica-<id>.pem and replica-<id>-key.pem; client-<site>.pem and
// client-<site>-key.pem. The CA's key, ca-key.pem, lets more be issued.
type Layout struct{ Dir string }

// CA is the CA certificate's path.
func (l Layout) CA() string { return filepath.Join(l.Dir, "ca.pem") }

// Replica returns replica id's files.
func (l Layout) Replica(id uint64) Files { return l.files(fmt.Sprintf("replica-%d", id)) }

// ReplicaPattern is Replica with "{id}" for the id, as the configuration
// names a replica's files.
func (l Layout) ReplicaPattern() Files { return l.files("replica-{id}") }

// Client returns the files of the clients at site; Client("{site}") is the
// pattern the configuration uses.
func (l Layout) Client(site string) Files { return l.files("client-" + site) }

func (l Layout) files(name string) Files {
	base := filepath.Join(l.Dir, name)
	return Files{CA: l.CA(), Cert: base + ".pem", Key: base + "-key.pem"}
}

// Replica is what a replica's certificate needs.
type Replica struct {
	ID   uint64
	Addr string // host:port; the host joins the certificate's names
}

// Generate writes a new CA and a certificate for every replica and client
// site, valid for validity, into l.Dir (created if missing; keys mode 0600).
func (l Layout) Generate(replicas []Replica, sites []string, validity time.Duration) error {
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return err
	}
	now := time.Now()
	ca, err := NewCA("hybridkv CA", now.Add(validity))
	if err != nil {
		return err
	}
	caPEM, err := ca.PEM()
	if err != nil {
		return err
	}
	if err := write(Files{Cert: l.CA(), Key: filepath.Join(l.Dir, "ca-key.pem")}, caPEM); err != nil {
		return err
	}
	for _, r := range replicas {
		host, _, err := net.SplitHostPort(r.Addr)
		if err != nil {
			host = r.Addr
		}
		issued, err := ca.Replica(r.ID, []string{host}, now.Add(-time.Hour), now.Add(validity))
		if err != nil {
			return err
		}
		if err := write(l.Replica(r.ID), issued); err != nil {
			return err
		}
	}
	for _, site := range sites {
		if strings.ContainsAny(site, `/\`) {
			return fmt.Errorf("site %q: a site name with a path separator cannot name a file", site)
		}
		issued, err := ca.Client(site, now.Add(-time.Hour), now.Add(validity))
		if err != nil {
			return err
		}
		if err := write(l.Client(site), issued); err != nil {
			return err
		}
	}
	return nil
}

func write(f Files, issued Issued) error {
	if err := os.WriteFile(f.Cert, issued.CertPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(f.Key, issued.KeyPEM, 0o600)
}
