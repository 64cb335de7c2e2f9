package io.verbatim.net;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * One cluster's TLS, from PEM files: its certificate chain and PKCS#8 private key (what its ports serve
 * and what its clients present when a server asks), the CA certificates it trusts (servers' and clients'
 * alike), and whether its ports ask clients for a certificate. Clients verify the server's host name.
 *
 * @param clientAuth {@code NONE}: no client certificate asked; {@code OPTIONAL}: asked, checked against
 *        the CA when given; {@code REQUIRE}: a connection without one is refused
 */
public record Tls(Path certificateChain, Path privateKey, Path trustedCertificates, ClientAuth clientAuth) {

    public Tls {
        if (certificateChain == null || privateKey == null || trustedCertificates == null || clientAuth == null) {
            throw new IllegalArgumentException("TLS needs a certificate chain, a private key, trusted certificates "
                    + "and a client authentication mode");
        }
    }

    /** What every listening port of the cluster serves. */
    public SslContext serverContext() {
        try {
            return SslContextBuilder.forServer(certificateChain.toFile(), privateKey.toFile())
                    .trustManager(trustedCertificates.toFile()).clientAuth(clientAuth).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("TLS files " + certificateChain + " and " + privateKey
                    + " cannot be used: " + e.getMessage(), e);
        }
    }

    /** What the cluster's clients of its peers use: the CA to check servers by, its certificate to present. */
    public SslContext clientContext() {
        try {
            return SslContextBuilder.forClient().trustManager(trustedCertificates.toFile())
                    .keyManager(certificateChain.toFile(), privateKey.toFile()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("TLS files " + certificateChain + " and " + privateKey
                    + " cannot be used: " + e.getMessage(), e);
        }
    }

    /** Client connections check that the server's certificate names the host they called. */
    public static Consumer<SslHandler> verifyHostname() {
        return handler -> {
            SSLParameters p = handler.engine().getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS");
            handler.engine().setSSLParameters(p);
        };
    }

    /** A JDK {@link SSLContext} trusting the CA certificates of {@code pem} (the command line's {@code --ca}). */
    public static SSLContext trusting(Path pem) throws IOException, GeneralSecurityException {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (InputStream in = Files.newInputStream(pem)) {
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("ca-" + i++, c);
            }
            if (i == 0) {
                throw new GeneralSecurityException(pem + " holds no certificate");
            }
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }
}
