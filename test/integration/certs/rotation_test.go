//go:build integration

/*
Copyright 2026 The tdb-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package certs_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// issue signs a serving certificate for the webhook Service valid until
// notAfter with the CA.
func issue(ca *x509.Certificate, caKey *rsa.PrivateKey, notAfter time.Time) (certPEM, keyPEM []byte) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: serviceName + "." + namespace + ".svc"},
		DNSNames:     []string{serviceName + "." + namespace + ".svc", serviceName + "." + namespace + ".svc.cluster.local"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	kder, err := x509.MarshalECPrivateKey(k)
	Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// newCA makes a CA as the rotator keeps it (an RSA key in PKCS#1), valid
// until notAfter.
func newCA(notAfter time.Time) (certPEM, keyPEM []byte, cert *x509.Certificate, key *rsa.PrivateKey) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "tdb-operator-ca"},
		DNSNames:     []string{"tdb-operator-ca"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		parseCert(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), key
}

// caFromSecret parses the rotator's CA and its RSA key.
func caFromSecret(data map[string][]byte) (*x509.Certificate, *rsa.PrivateKey) {
	block, _ := pem.Decode(data["ca.key"])
	Expect(block).NotTo(BeNil())
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	return parseCert(data["ca.crt"]), key
}

// servesSecretCertificate: the replica presents the Secret's tls.crt, and
// it verifies against the injected CA for the Service's names.
func servesSecretCertificate(r *replica) func(Gomega) {
	return func(g Gomega) {
		served, err := r.servedCertificate()
		g.Expect(err).NotTo(HaveOccurred())
		data := secretData()
		g.Expect(served.Raw).To(Equal(parseCert(data["tls.crt"]).Raw), "replica %s serves another certificate than the Secret's", r.name)
		g.Expect(verifyForService(served, injectedCA())).To(Succeed())
	}
}

var _ = Describe("Webhook certificates", Ordered, func() {
	var leaderless, first, second *replica
	AfterAll(func() {
		for _, r := range []*replica{leaderless, first, second} {
			if r != nil {
				r.stop()
			}
		}
	})

	It("keeps a replica that does not lead unready, and not listening, until the Secret holds a certificate", func() {
		holdLease()
		leaderless = startReplica("follower", true)
		Consistently(func(g Gomega) {
			g.Expect(leaderless.ready()).NotTo(Succeed())
			_, err := leaderless.servedCertificate()
			g.Expect(err).To(HaveOccurred())
			g.Expect(secretData()).To(BeEmpty(), "a replica that does not lead wrote the Secret")
		}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	})

	It("fills the Secret, injects the CA and serves a certificate valid for the Service's DNS names", func() {
		first = startReplica("first", false)
		Eventually(func(g Gomega) {
			g.Expect(secretData()).To(HaveKey("ca.crt"))
			g.Expect(secretData()).To(HaveKey("ca.key"))
			g.Expect(secretData()).To(HaveKey("tls.crt"))
			g.Expect(secretData()).To(HaveKey("tls.key"))
		}).Should(Succeed())
		data := secretData()
		Eventually(injectedCA).Should(Equal(data["ca.crt"]), "the CA bundle is not the Secret's CA")
		Expect(verifyForService(parseCert(data["tls.crt"]), injectedCA())).To(Succeed())
		Eventually(first.ready).Should(Succeed())
		Eventually(servesSecretCertificate(first)).Should(Succeed())
		Eventually(first.rotation.CAInjected()).Should(BeClosed())
		cert := parseCert(data["tls.crt"])
		Expect(cert.NotAfter).To(BeTemporally(">", time.Now().Add(300*24*time.Hour)))
	})

	It("serves the same certificate on the replica that does not lead, which only reads the Secret", func() {
		Eventually(leaderless.ready).Should(Succeed())
		Eventually(servesSecretCertificate(leaderless)).Should(Succeed())
		Expect(leaseHolder()).To(Equal("someone-else"))
		Expect(leaderless.rotation.CAInjected()).NotTo(BeClosed(), "the replica that does not lead ran the rotator")
	})

	It("reuses the Secret in a second instance that rotates", func() {
		before := secret()
		caBefore := injectedCA()
		second = startReplica("second", false)
		Eventually(second.ready).Should(Succeed())
		Eventually(servesSecretCertificate(second)).Should(Succeed())
		Eventually(second.rotation.CAInjected()).Should(BeClosed())
		Consistently(func(g Gomega) {
			after := secret()
			g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "the second instance rewrote the Secret")
			g.Expect(injectedCA()).To(Equal(caBefore))
		}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	})

	It("reissues a serving certificate that expires within the renewal window, keeping the CA, and every replica switches", func() {
		data := secretData()
		ca, caKey := caFromSecret(data)
		crt, key := issue(ca, caKey, time.Now().Add(24*time.Hour))
		s := secret()
		s.Data["tls.crt"], s.Data["tls.key"] = crt, key
		Expect(k8s.Update(ctx, s)).To(Succeed())

		Eventually(func(g Gomega) {
			renewed := parseCert(secretData()["tls.crt"])
			g.Expect(renewed.NotAfter).To(BeTemporally(">", time.Now().Add(300*24*time.Hour)))
		}).Should(Succeed())
		Expect(secretData()["ca.crt"]).To(Equal(data["ca.crt"]), "renewing the serving certificate replaced the CA")
		Expect(injectedCA()).To(Equal(data["ca.crt"]))
		for _, r := range []*replica{first, second, leaderless} {
			Eventually(servesSecretCertificate(r)).Should(Succeed())
		}
	})

	It("replaces a CA that expires within the renewal window: new bundle, new chain on every replica", func() {
		caPEM, caKeyPEM, ca, caKey := newCA(time.Now().Add(24 * time.Hour))
		crt, key := issue(ca, caKey, time.Now().Add(24*time.Hour))
		s := secret()
		s.Data["ca.crt"], s.Data["ca.key"], s.Data["tls.crt"], s.Data["tls.key"] = caPEM, caKeyPEM, crt, key
		Expect(k8s.Update(ctx, s)).To(Succeed())

		Eventually(func(g Gomega) {
			data := secretData()
			g.Expect(bytes.Equal(data["ca.crt"], caPEM)).To(BeFalse(), "the expiring CA was kept")
			g.Expect(parseCert(data["ca.crt"]).NotAfter).To(BeTemporally(">", time.Now().Add(5*365*24*time.Hour)))
			g.Expect(injectedCA()).To(Equal(data["ca.crt"]))
		}).Should(Succeed())
		for _, r := range []*replica{first, second, leaderless} {
			Eventually(servesSecretCertificate(r)).Should(Succeed())
			Expect(r.ready()).To(Succeed())
		}
	})
})
