package io.verbatim.net;

import io.netty.handler.ssl.SslHandler;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import reactor.netty.Connection;

/** The name a verified client certificate carries: its subject's CN. */
final class Certificates {
    private Certificates() {
    }

    /** The CN of the client certificate TLS verified on {@code connection}, if any. */
    static Optional<String> clientName(Connection connection) {
        SslHandler ssl = connection.channel().pipeline().get(SslHandler.class);
        if (ssl == null) {
            return Optional.empty();
        }
        try {
            Certificate[] chain = ssl.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x ? commonName(x) : Optional.empty();
        } catch (SSLPeerUnverifiedException e) {
            return Optional.empty(); // no certificate offered (client authentication optional or none)
        }
    }

    /** The CN of {@code certificate}'s subject, if it has one. */
    static Optional<String> commonName(X509Certificate certificate) {
        try {
            for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    return Optional.of(rdn.getValue().toString());
                }
            }
        } catch (InvalidNameException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }
}
