package io.verbatim.cli;

import io.verbatim.net.ClusterKey;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code verbatim key public}: a cluster's verifying key, what the nodes of other clusters are given. */
@Command(name = "key", mixinStandardHelpOptions = true, description = "A cluster's keys.",
        subcommands = KeyCommand.PublicCommand.class)
final class KeyCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "public", mixinStandardHelpOptions = true,
            description = "Prints the verifying key (ed25519:<base64>) of a cluster's secret, read from standard input "
                    + "(one line) or from an environment variable, never echoed: what a node of another cluster is "
                    + "given as clusters[].token instead of the secret.")
    static final class PublicCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--env", paramLabel = "NAME", description = "read the secret from this environment variable")
        @Nullable String env;

        @Override
        public Integer call() throws IOException {
            String secret = env != null ? System.getenv(env) : new BufferedReader(new InputStreamReader(System.in,
                    StandardCharsets.UTF_8)).readLine();
            String from = env != null ? "environment variable " + env : "standard input";
            if (secret == null || secret.isEmpty()) {
                spec.commandLine().getErr().println("verbatim key public: no secret in " + from);
                return Verbatim.BAD_INPUT;
            }
            if (secret.startsWith("ed25519:") || secret.startsWith("sha256:")) {
                spec.commandLine().getErr().println("verbatim key public: the text in " + from + " is a key or a digest "
                        + "already, not a secret (a configuration reads it as such)");
                return Verbatim.BAD_INPUT;
            }
            if (!secret.equals(secret.strip())) {
                spec.commandLine().getErr().println("verbatim key public: the secret in " + from + " has white space at "
                        + "its start or end (a configuration refuses such a token)");
                return Verbatim.BAD_INPUT;
            }
            spec.commandLine().getOut().println(ClusterKey.secret(secret).verifying().form());
            return 0;
        }
    }
}
