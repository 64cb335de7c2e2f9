package io.verbatim.net;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A CA and the certificates it signs, made at test time and written as PEM files (certificate chains,
 * PKCS#8 keys): what {@code security.tls} and {@code clusters[].tls} name. Shared with the other
 * modules' tests through this module's test jar.
 */
public final class TestCertificates {
    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());
    private final Path dir;
    private final String name;
    private final KeyPair caKeys;
    private final X509Certificate ca;

    /** A new CA named {@code name}, its files in {@code dir}. */
    public TestCertificates(Path dir, String name) throws Exception {
        this.dir = dir;
        this.name = name;
        this.caKeys = keys();
        X500Name subject = new X500Name("CN=" + name);
        X509v3CertificateBuilder b = builder(subject, subject, caKeys);
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        this.ca = sign(b, caKeys);
        Files.writeString(caFile(), pem("CERTIFICATE", ca.getEncoded()));
    }

    /** The CA certificate's PEM file. */
    public Path caFile() {
        return dir.resolve(name + "-ca.pem");
    }

    /** A certificate for {@code cn} (SAN IP 127.0.0.1 and DNS localhost) and its key: [chain file, key file]. */
    public Path[] issue(String cn) throws Exception {
        return issue(cn, new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                new GeneralName(GeneralName.dNSName, "localhost"));
    }

    /** A certificate for {@code cn} naming only {@code host} (DNS): no loopback name. */
    public Path[] issueFor(String cn, String host) throws Exception {
        return issue(cn, new GeneralName(GeneralName.dNSName, host));
    }

    private Path[] issue(String cn, GeneralName... names) throws Exception {
        KeyPair keys = keys();
        X509v3CertificateBuilder b = builder(new X500Name("CN=" + name), new X500Name("CN=" + cn), keys);
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
        b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[] {
                KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
        X509Certificate cert = sign(b, caKeys);
        Path chain = dir.resolve(name + "-" + cn + ".pem");
        Path key = dir.resolve(name + "-" + cn + ".key");
        Files.writeString(chain, pem("CERTIFICATE", cert.getEncoded()) + pem("CERTIFICATE", ca.getEncoded()));
        Files.writeString(key, pem("PRIVATE KEY", keys.getPrivate().getEncoded())); // PKCS#8
        return new Path[] {chain, key};
    }

    private static KeyPair keys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
        long now = System.currentTimeMillis();
        return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(SERIAL.incrementAndGet()),
                new Date(now - 60_000), new Date(now + 86_400_000L), subject, keys.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair issuer)
            throws OperatorCreationException, GeneralSecurityException {
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate())));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
