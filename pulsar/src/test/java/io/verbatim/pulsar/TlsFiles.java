package io.verbatim.pulsar;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed CA and a broker certificate it signs (SAN IP 127.0.0.1 and DNS localhost, server and client
 * use), made at test time with the JDK's {@code keytool} and written as PEM: the CA, the broker's chain and its
 * PKCS#8 key. RSA, which every part of Pulsar's TLS loads.
 *
 * <p>Not Bouncy Castle as the net module's {@code TestCertificates}: the shaded Pulsar client brings bcprov and
 * bcutil 1.81 at compile scope, and the project's bcpkix 1.84 does not run on them ({@code NoSuchFieldError
 * id_MLDSA44_RSA2048_PSS_SHA256}); raising them for a test would change what this module ships with.
 */
final class TlsFiles {
    private static final String PASSWORD = "verbatim-test";
    final Path ca;
    final Path certificate;
    final Path key;

    private TlsFiles(Path ca, Path certificate, Path key) {
        this.ca = ca;
        this.certificate = certificate;
        this.key = key;
    }

    /** Only a CA named {@code name} (its PEM file), in {@code dir}: one that signed nothing a broker presents. */
    static Path makeCa(Path dir, String name) throws Exception {
        return ca(dir, name);
    }

    /** A new CA named {@code name} and a broker certificate from it, in {@code dir}. */
    static TlsFiles make(Path dir, String name) throws Exception {
        Path ca = ca(dir, name);
        Path caStore = dir.resolve(name + "-ca.p12");
        Path brokerStore = dir.resolve(name + "-broker.p12");
        Path csr = dir.resolve(name + "-broker.csr");
        Path signed = dir.resolve(name + "-broker.crt");
        for (Path p : List.of(brokerStore, csr, signed)) {
            Files.deleteIfExists(p);
        }
        keytool("-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=broker",
                "-validity", "2", "-keystore", brokerStore.toString());
        keytool("-certreq", "-alias", "broker", "-keystore", brokerStore.toString(), "-file", csr.toString());
        keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", caStore.toString(), "-infile", csr.toString(),
                "-outfile", signed.toString(), "-validity", "2", "-ext", "san=ip:127.0.0.1,dns:localhost",
                "-ext", "eku=serverAuth,clientAuth", "-ext", "bc=ca:false");
        Path certificate = Files.writeString(dir.resolve(name + "-broker.pem"),
                Files.readString(signed) + Files.readString(ca));
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(brokerStore)) {
            store.load(in, PASSWORD.toCharArray());
        }
        Key brokerKey = store.getKey("broker", PASSWORD.toCharArray());
        Path key = Files.writeString(dir.resolve(name + "-broker.key"), pem("PRIVATE KEY", brokerKey.getEncoded()));
        return new TlsFiles(ca, certificate, key);
    }

    private static Path ca(Path dir, String name) throws Exception {
        Files.createDirectories(dir);
        Path caStore = dir.resolve(name + "-ca.p12");
        Path ca = dir.resolve(name + "-ca.pem");
        Files.deleteIfExists(caStore);
        Files.deleteIfExists(ca);
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + name,
                "-ext", "bc:c", "-ext", "ku:c=keyCertSign,cRLSign", "-validity", "2", "-keystore", caStore.toString());
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", caStore.toString(), "-file", ca.toString());
        return ca;
    }

    private static void keytool(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.add("-J-XX:TieredStopAtLevel=1"); // a short-lived JVM: C1 only starts faster
        command.add("-J-Xshare:auto");
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD, "-noprompt"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("keytool " + String.join(" ", args) + " failed: " + output);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
