/**
 * Who the members of a metadata log are, and how one proves to another that it is itself: each member has
 * a secret of its own, from which it derives an Ed25519 signing key ({@code io.verbatim.net.SigningKey});
 * the others hold its verifying key. {@link io.verbatim.metadatalog.identity.MemberKeys} is one member's view
 * (its own signing key, every member's verifying key, which members are listeners); the transport's
 * handshake and {@link io.verbatim.metadatalog.identity.SignedCall} (a member's HTTP call to another, such as
 * the brokers' report to the controller leader) sign with it. No secret ever leaves its member.
 */
@NullMarked
package io.verbatim.metadatalog.identity;

import org.jspecify.annotations.NullMarked;
