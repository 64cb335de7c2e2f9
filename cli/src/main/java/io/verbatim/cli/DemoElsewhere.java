package io.verbatim.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code demo} in this jar, which goes without the checks the demo judges its run by (they are the tests'): the
 * usage lists it as the examples' jar runs it, and called, it says where that is and exits 2.
 */
@Command(name = "demo", description = Verbatim.DEMO_DESCRIPTION)
final class DemoElsewhere implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    /** Whatever follows {@code demo}, the answer is the same. */
    @Unmatched
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() {
        spec.commandLine().getErr().println("verbatim demo: the demo runs from the examples' jar, not this one: "
                + "./verbatim demo, or java -jar examples/target/verbatim-demo.jar");
        return Verbatim.BAD_INPUT;
    }
}
