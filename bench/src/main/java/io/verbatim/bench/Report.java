package io.verbatim.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A suite run: the machine, the rounds, the rows. Printed as one Markdown table and written as the same in
 * JSON (a non-finite figure is JSON {@code null}).
 */
record Report(Machine machine, int rounds, int warmUpRounds, boolean quick, String started, double elapsedSeconds,
        List<Row> rows) {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public Report {
        rows = List.copyOf(rows);
    }

    /** The header lines, the table, and the rows' notes. */
    public String table() {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "verbatim bench: %d round(s) after %d warm-up round(s)%s, %.0f s;"
                + " ratio = numerator ÷ denominator, both measured in the same round; a goal is met when the median"
                + " of the per-round ratios is within it%n", rounds, warmUpRounds, quick ? ", --quick (tiny sizes:"
                + " a smoke test, not figures)" : "", elapsedSeconds));
        b.append("machine: ").append(machine).append(System.lineSeparator()).append(System.lineSeparator());
        b.append("| # | measure | numerator (median) | denominator (median) | ratio | per-round ratio min / median / max"
                + " | goal | met |").append(System.lineSeparator());
        b.append("| --- | --- | --- | --- | --- | --- | --- | --- |").append(System.lineSeparator());
        for (Row r : rows) {
            b.append(line(r)).append(System.lineSeparator());
        }
        boolean header = false;
        for (Row r : rows) {
            for (String note : r.notes()) {
                if (!header) {
                    b.append(System.lineSeparator()).append("notes:").append(System.lineSeparator());
                    header = true;
                }
                b.append("  ").append(r.id()).append(": ").append(note).append(System.lineSeparator());
            }
        }
        return b.toString();
    }

    /** One table line. */
    static String line(Row r) {
        Row.Spec s = r.spec();
        boolean figures = !r.numerators().isEmpty();
        String num = s.numerator() + (figures ? ": " + quantity(r.numerator().median(), s.unit()) : "");
        String den = s.denominator() + (figures ? ": " + quantity(r.denominator().median(), s.unit()) : "");
        Row.Spread ratio = r.ratio();
        String median = figures ? ratio(ratio.median()) : "—";
        String spread = figures ? ratio(ratio.min()) + " / " + ratio(ratio.median()) + " / " + ratio(ratio.max()) : "—";
        return "| " + String.join(" | ", s.id(), s.measure(), num, den, median, spread, s.goal().text(), r.verdict())
                + " |";
    }

    static String quantity(double v, String unit) {
        if (!Double.isFinite(v)) {
            return String.valueOf(v);
        }
        String n = Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%,.0f", v)
                : Math.abs(v) >= 1 ? String.format(Locale.ROOT, "%.2f", v) : String.format(Locale.ROOT, "%.4f", v);
        return unit.isEmpty() ? n : n + " " + unit;
    }

    static String ratio(double v) {
        if (!Double.isFinite(v)) {
            return String.valueOf(v);
        }
        return Math.abs(v) >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.3f", v);
    }

    /** The report as JSON. */
    public String json() {
        ObjectNode root = JSON.createObjectNode();
        root.put("suite", "verbatim bench");
        root.put("started", started);
        root.put("elapsedSeconds", elapsedSeconds);
        root.put("rounds", rounds);
        root.put("warmUpRounds", warmUpRounds);
        root.put("quick", quick);
        ObjectNode m = root.putObject("machine");
        m.put("cores", machine.cores());
        m.put("java", machine.java());
        m.put("vm", machine.vm());
        m.put("maxHeapBytes", machine.maxHeapBytes());
        m.put("os", machine.os());
        m.put("osVersion", machine.osVersion());
        m.put("arch", machine.arch());
        number(m, "loadAverage", machine.loadAverage() < 0 ? Double.NaN : machine.loadAverage());
        ArrayNode rowsNode = root.putArray("rows");
        for (Row r : rows) {
            Row.Spec s = r.spec();
            ObjectNode o = rowsNode.addObject();
            o.put("id", s.id());
            o.put("measure", s.measure());
            quantity(o.putObject("numerator"), s.numerator(), s.unit(), r.numerators());
            quantity(o.putObject("denominator"), s.denominator(), s.unit(), r.denominators());
            ObjectNode ratio = o.putObject("ratio");
            Row.Spread spread = r.ratio();
            number(ratio, "median", spread.median());
            number(ratio, "min", spread.min());
            number(ratio, "max", spread.max());
            numbers(ratio.putArray("rounds"), r.ratios());
            ObjectNode goal = o.putObject("goal");
            goal.put("text", s.goal().text());
            number(goal, "min", s.goal().min());
            number(goal, "max", s.goal().max());
            o.put("status", r.status().text());
            Boolean met = r.met();
            if (met == null) {
                o.putNull("met");
            } else {
                o.put("met", met.booleanValue());
            }
            o.put("verdict", r.verdict());
            ArrayNode notes = o.putArray("notes");
            r.notes().forEach(notes::add);
        }
        try {
            return JSON.writeValueAsString(root) + System.lineSeparator();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes {@link #json()} to {@code path}, making its directory. */
    public void writeJson(Path path) {
        try {
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(path, json(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void quantity(ObjectNode o, String name, String unit, List<Double> rounds) {
        o.put("name", name);
        o.put("unit", unit);
        number(o, "median", Row.Spread.of(rounds).median());
        numbers(o.putArray("rounds"), rounds);
    }

    private static void number(ObjectNode o, String field, double v) {
        if (Double.isFinite(v)) {
            o.put(field, v);
        } else {
            o.putNull(field);
        }
    }

    private static void numbers(ArrayNode a, List<Double> values) {
        for (double v : values) {
            if (Double.isFinite(v)) {
                a.add(v);
            } else {
                a.addNull();
            }
        }
    }
}
