package io.verbatim.bench;

import static io.verbatim.bench.DelegationBench.EGRESS_GOAL;
import static io.verbatim.bench.DelegationBench.IN_FLIGHT;
import static io.verbatim.bench.DelegationBench.LATENCY_GOAL;
import static io.verbatim.bench.DelegationBench.LISTENERS;
import static io.verbatim.bench.DelegationBench.MODES;
import static io.verbatim.bench.DelegationBench.VOTERS;
import static io.verbatim.bench.RaftGroup.spread;

import io.verbatim.bench.DelegationRounds.Lags;
import io.verbatim.bench.DelegationRounds.Sample;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * What {@link DelegationBench}'s own run prints: where each group's leader bytes went, round by round, and
 * the ratio table (delegated ÷ direct, the revocations, the fallback runs), also as JSON.
 */
final class DelegationReport {
    private DelegationReport() {
    }

    /** Per group and load: where the leader's bytes went, and the followers' share. */
    static void details(List<DelegationArm> arms) {
        System.out.printf("%n| group, load: min / median / max of the rounds | leader B/entry | to voters | to listeners"
                + " | of which entries | empty appends | followers → listeners B/entry | commits/s | lag p50 ms "
                + "(delegated / by leader) | lag p99 ms (delegated / by leader) |%n");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (int mode : MODES) {
            for (DelegationArm arm : arms) {
                List<Sample> s = arm.samples(mode);
                String lag50 = lagSpread(arm, s, Lags::p50);
                String lag99 = lagSpread(arm, s, Lags::p99);
                System.out.printf("| %s, %d in flight | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", arm.name, mode,
                        spread(s, x -> x.egress().perEntry(), "%.0f"),
                        spread(s, x -> x.egress().perEntryToVoters(), "%.0f"),
                        spread(s, x -> x.egress().perEntryToListeners(), "%.0f"),
                        spread(s, x -> x.egress().part(b -> b.entryBytes), "%.0f"),
                        spread(s, x -> x.egress().part(b -> b.emptyAppendBytes), "%.0f"),
                        spread(s, x -> x.followerBytesToListeners().values().stream().mapToLong(Long::longValue).sum()
                                / (double) x.egress().entries(), "%.0f"),
                        spread(s, x -> x.egress().perSecond(), "%.0f"), lag50, lag99);
            }
        }
    }

    /** "delegated a / b / c; by leader d / e / f", each part only if some listener is fed that way. */
    private static String lagSpread(DelegationArm arm, List<Sample> s, ToDoubleFunction<Lags> f) {
        List<String> parts = new ArrayList<>();
        if (!arm.delegations.isEmpty()) {
            parts.add("delegated " + spread(s, x -> f.applyAsDouble(x.delegated()), "%.2f"));
        }
        if (arm.delegations.size() < LISTENERS) {
            parts.add("by leader " + spread(s, x -> f.applyAsDouble(x.byLeader()), "%.2f"));
        }
        return String.join("; ", parts);
    }

    /** One line of the ratio table. */
    record Line(String measure, String unit, double numerator, double denominator, double ratio, double ratioMin,
            double ratioMax, String goal, @Nullable Boolean met) {
        String verdict() {
            return met == null ? "—" : met ? "met" : "missed";
        }

        String markdown() {
            String num = Double.isNaN(numerator) ? "—" : fmt(numerator) + " " + unit;
            String den = Double.isNaN(denominator) ? "—" : fmt(denominator) + " " + unit;
            String ratios = Double.isNaN(ratio) ? "—" : String.format(Locale.ROOT, "%.3f", ratio)
                    + (Double.isNaN(ratioMin) ? "" : String.format(Locale.ROOT, " [%.3f–%.3f]", ratioMin, ratioMax));
            return "| " + measure + " | " + num.strip() + " | " + den.strip() + " | " + ratios + " | " + goal + " | "
                    + verdict() + " |";
        }

        private static String fmt(double v) {
            return Math.abs(v) >= 100 || v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v)
                    : String.format(Locale.ROOT, "%.2f", v);
        }
    }

    private static double median(List<Sample> s, ToDoubleFunction<Sample> f) {
        double[] v = s.stream().mapToDouble(f).sorted().toArray();
        return v[v.length / 2];
    }

    /** A delegated ÷ direct row: medians of the rounds, and the spread of the per-round ratios. */
    private static Line ratio(String measure, String unit, List<Sample> num, List<Sample> den, ToDoubleFunction<Sample> f,
            double goal, boolean hasGoal) {
        double n = median(num, f);
        double d = median(den, f);
        double[] per = new double[Math.min(num.size(), den.size())];
        for (int i = 0; i < per.length; i++) {
            per[i] = f.applyAsDouble(num.get(i)) / f.applyAsDouble(den.get(i));
        }
        Arrays.sort(per);
        double r = n / d;
        return new Line(measure, unit, n, d, r, per[0], per[per.length - 1],
                hasGoal ? String.format(Locale.ROOT, "≤ %.2f", goal) : "—", hasGoal ? r <= goal : null);
    }

    private static Line value(String measure, String unit, double v, String goal, @Nullable Boolean met) {
        return new Line(measure, unit, v, Double.NaN, Double.NaN, Double.NaN, Double.NaN, goal, met);
    }

    static List<Line> table(List<DelegationArm> arms, List<DelegationFallback> fallbacks) {
        DelegationArm direct = arms.get(0);
        List<Line> rows = new ArrayList<>();
        for (int mode : List.of(IN_FLIGHT, 1)) {
            String load = mode + " in flight";
            for (DelegationArm arm : arms.subList(1, arms.size())) {
                List<Sample> num = arm.samples(mode);
                List<Sample> den = direct.samples(mode);
                // the rounds in which the leader fed no delegated listener itself: each delegation in force
                // at the start and the end, none revoked in between (a revocation lasts 15 s: a round with one
                // measures mostly direct feeding); paired with direct's rounds of the same number
                List<Sample> cleanNum = new ArrayList<>();
                List<Sample> cleanDen = new ArrayList<>();
                for (int i = 0; i < Math.min(num.size(), den.size()); i++) {
                    Sample x = num.get(i);
                    if (x.delegatedAtStart() == arm.delegations.size() && x.delegatedAtEnd() == arm.delegations.size()
                            && x.revocations().isEmpty()) {
                        cleanNum.add(x);
                        cleanDen.add(den.get(i));
                    }
                }
                boolean anyClean = !cleanNum.isEmpty();
                List<Sample> n = anyClean ? cleanNum : num;
                List<Sample> d = anyClean ? cleanDen : den;
                String rounds = anyClean ? " (" + cleanNum.size() + " of " + num.size() + " rounds: every delegation in"
                        + " force)" : " (all " + num.size() + " rounds: none had every delegation in force)";
                String all = " (all " + num.size() + " rounds)";
                String vs = arm.name + " ÷ direct, " + load;
                rows.add(ratio("leader egress B per committed entry, " + vs + rounds, "B", n, d,
                        x -> x.egress().perEntry(), EGRESS_GOAL, true));
                if (anyClean && cleanNum.size() < num.size()) {
                    rows.add(ratio("leader egress B per committed entry, " + vs + all, "B", num, den,
                            x -> x.egress().perEntry(), EGRESS_GOAL, true));
                }
                rows.add(ratio("commit latency p50, " + vs + rounds, "ms", n, d, Sample::latencyP50, LATENCY_GOAL, true));
                rows.add(ratio("commit latency p99, " + vs + rounds, "ms", n, d, Sample::latencyP99, LATENCY_GOAL, true));
                rows.add(ratio("listener lag p50 (leader applied → listener applied), " + vs + rounds, "ms", n, d,
                        x -> x.all().p50(), 0, false));
                rows.add(ratio("listener lag p99, " + vs + rounds, "ms", n, d, x -> x.all().p99(), 0, false));
            }
        }
        for (DelegationArm arm : arms.subList(1, arms.size())) {
            List<Sample> all = arm.samples.values().stream().flatMap(List::stream).toList();
            long revoked = all.stream().mapToLong(x -> x.revocations().size()).sum();
            long short_ = all.stream().filter(x -> x.delegatedAtStart() < arm.delegations.size()).count();
            rows.add(value("revocations by the leader in the " + all.size() + " measured rounds of " + arm.name
                    + " (no member failed; " + short_ + " rounds began with a delegation revoked)", "", revoked, "= 0",
                    revoked == 0));
        }
        for (DelegationFallback f : fallbacks) {
            String who = "fallback, " + f.arm() + ", " + f.load() + ", " + f.victim() + " closed"
                    + (f.note().isEmpty() ? "" : " (" + f.note() + ")") + ": ";
            String why = f.reasons().isEmpty() ? "never revoked" : f.reasons().stream().allMatch(r -> r.contains("lags"))
                    ? "revoked on the delegate's lag" : f.reasons().stream().allMatch(r -> r.contains("not heard"))
                    ? "revoked as the delegate was not heard" : "revoked: " + String.join("; ", f.reasons());
            rows.add(value(who + "ticks from the failure to the revocation of " + f.affected() + " (" + why + ")",
                    "ticks", f.ticksToRevoke(), "—", null));
            rows.add(value(who + "… in ms", "ms", f.millisToRevoke(), "—", null));
            rows.add(value(who + "lag p50 of its listeners, committed failure → revocation", "ms", f.outage().p50(), "—",
                    null));
            rows.add(value(who + "lag p99 of its listeners, committed failure → revocation", "ms", f.outage().p99(), "—",
                    null));
            rows.add(value(who + "lag max of its listeners, committed failure → revocation", "ms", f.outage().max(), "—",
                    null));
            rows.add(value(who + "lag p99 of its listeners, committed after the revocation", "ms",
                    f.afterRevocation().p99(), "—", null));
            long minApplied = f.appliedAsEntries().entrySet().stream()
                    .mapToLong(e -> e.getValue() + f.bySnapshot().getOrDefault(e.getKey(), 0L)).min().orElse(0);
            rows.add(new Line(who + "commands applied by the listener that applied fewest (entries + snapshot)"
                    + " ÷ committed", "", minApplied, f.committed(), minApplied / (double) f.committed(), Double.NaN,
                    Double.NaN, "= 1", f.countsEqual() && minApplied == f.committed()));
        }
        return rows;
    }

    static String json(List<Line> rows, String machine, int rounds, double seconds, double elapsed) {
        StringBuilder b = new StringBuilder();
        b.append("{\n  \"bench\": \"DelegationBench\",\n  \"issue\": \"13 P7\",\n");
        b.append("  \"machine\": ").append(quote(machine)).append(",\n");
        b.append(String.format(Locale.ROOT, "  \"voters\": %d,\n  \"listeners\": %d,\n  \"transport\": \"tcp-loopback\",\n"
                + "  \"rounds\": %d,\n  \"secondsPerRound\": %.2f,\n  \"elapsedSeconds\": %.1f,\n", VOTERS, LISTENERS,
                rounds, seconds, elapsed));
        b.append("  \"rows\": [\n");
        for (int i = 0; i < rows.size(); i++) {
            Line r = rows.get(i);
            b.append("    {\"measure\": ").append(quote(r.measure())).append(", \"unit\": ").append(quote(r.unit()))
                    .append(", \"numerator\": ").append(number(r.numerator()))
                    .append(", \"denominator\": ").append(number(r.denominator()))
                    .append(", \"ratio\": ").append(number(r.ratio()))
                    .append(", \"ratioMin\": ").append(number(r.ratioMin()))
                    .append(", \"ratioMax\": ").append(number(r.ratioMax()))
                    .append(", \"goal\": ").append(quote(r.goal()))
                    .append(", \"verdict\": ").append(quote(r.verdict())).append('}')
                    .append(i + 1 < rows.size() ? ",\n" : "\n");
        }
        b.append("  ]\n}\n");
        return b.toString();
    }

    private static String number(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "null" : String.format(Locale.ROOT, "%.4f", v);
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
