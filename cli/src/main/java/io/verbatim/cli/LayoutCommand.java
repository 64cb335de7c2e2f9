package io.verbatim.cli;

import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Join;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code verbatim layout join}: the layout algebra at the command line. */
@Command(name = "layout", mixinStandardHelpOptions = true, description = "Layout algebra.",
        subcommands = LayoutCommand.JoinCommand.class)
final class LayoutCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "join", mixinStandardHelpOptions = true,
            description = "The join of two layouts (union of boundaries, larger bucket count per range) and the "
                    + "mutations each side applies to reach it. A layout is written as its cells in ring order, "
                    + "hex ranges with bucket counts: 0000-7fff/4,8000-ffff/2")
    static final class JoinCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "A", description = "the first layout")
        String a;

        @Parameters(index = "1", paramLabel = "B", description = "the second layout")
        String b;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            Layout first = layout("A", a);
            Layout second = layout("B", b);
            Shape join = Join.of(Shape.of(first), Shape.of(second));
            out.println("join  " + notation(join));
            plan(out, "A", first, join);
            plan(out, "B", second, join);
            return 0;
        }

        private static void plan(PrintWriter out, String name, Layout layout, Shape target) {
            List<Mutation> plan = Join.toReach(layout, target);
            out.printf("%s reaches it in %d step(s)%s%n", name, plan.size(), plan.isEmpty() ? " (it already refines it)" : ":");
            Layout current = layout;
            for (Mutation m : plan) {
                current = current.apply(m, current.epoch(), 0).layoutOrThrow();
                out.printf("  %-34s -> %s%n", describe(m), notation(Shape.of(current)));
            }
        }

        private static String describe(Mutation m) {
            if (m instanceof Mutation.Split s) {
                return "split segment " + s.segmentId() + " at its midpoint";
            }
            if (m instanceof Mutation.SplitAt s) {
                return String.format("split segment %d at 0x%04x", s.segmentId(), s.boundary());
            }
            if (m instanceof Mutation.Rebucket r) {
                return "rebucket segment " + r.segmentId() + " to N=" + r.bucketCount();
            }
            return m.toString();
        }

        private Layout layout(String name, String text) {
            List<Segment> segments = new ArrayList<>();
            String[] cells = text.trim().split("\\s*,\\s*");
            try {
                for (int i = 0; i < cells.length; i++) {
                    String[] parts = cells[i].split("/");
                    if (parts.length != 2) {
                        throw new IllegalArgumentException("cell '" + cells[i] + "' is not start-end/N");
                    }
                    HashRange range = HashRange.fromHexString(parts[0]);
                    int n = Integer.parseInt(parts[1].replaceFirst("^[Nn]", ""));
                    segments.add(Segment.active(i, range, List.of(), 0, 0, Buckets.of(n)));
                }
                return Layout.of(0, segments.size(), segments);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "layout " + name + " '" + text
                        + "' is unusable: " + e.getMessage() + " (expected cells tiling 0000-ffff, e.g. "
                        + "0000-7fff/4,8000-ffff/2)");
            }
        }

        static String notation(Shape shape) {
            StringBuilder b = new StringBuilder();
            for (Shape.Cell c : shape.cells()) {
                b.append(b.length() == 0 ? "" : ",").append(c.range().toHexString()).append('/').append(c.buckets().count());
            }
            return b.toString();
        }
    }
}
