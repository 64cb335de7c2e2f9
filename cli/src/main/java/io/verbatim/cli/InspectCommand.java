package io.verbatim.cli;

import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.EntryFormatException;
import io.verbatim.model.entry.Message;
import io.verbatim.model.proto.MessageMetadata;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code verbatim inspect}: one stored entry in Pulsar's format, taken apart. */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Reads one entry in Pulsar's format (CRC32C framing, MessageMetadata, payload) and prints "
                + "its metadata, stamp, codec, replication stamp and messages.")
final class InspectCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "ENTRY-FILE", description = "a file holding one entry's bytes")
    Path file;

    @Option(names = "--max-messages", defaultValue = "20", description = "messages to list (default ${DEFAULT-VALUE})")
    int maxMessages;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        if (!Files.isRegularFile(file)) {
            spec.commandLine().getErr().println("verbatim inspect: " + file + " is not a readable file");
            return Verbatim.BAD_INPUT;
        }
        byte[] bytes = Files.readAllBytes(file);
        Entry entry;
        List<Message> messages;
        try {
            entry = Entry.parse(ByteBuffer.wrap(bytes));
            messages = Entries.messages(entry);
        } catch (EntryFormatException e) {
            spec.commandLine().getErr().println("verbatim inspect: " + file + " is not a usable entry: "
                    + e.getMessage());
            return Verbatim.BAD_INPUT;
        }
        MessageMetadata md = entry.metadata();
        out.printf("entry        %s (%,d bytes, checksum 0x%08x verified)%n", file, bytes.length, entry.checksum());
        out.printf("producer     %s, sequence %d, published %d%n", md.getProducerName(), md.getSequenceId(),
                md.getPublishTime());
        out.printf("codec        %s, payload %,d bytes compressed, %,d uncompressed%n", md.getCompression(),
                entry.payload().remaining(), md.getUncompressedSize());
        out.printf("messages     %d%s%n", messages.size(), entry.isBatch() ? " (batch)" : " (single)");
        out.printf("stamp        %s%n", entry.facts().stamp().map(stamp -> String.format(
                "entry_hash_min 0x%04x, entry_hash_max 0x%04x", stamp.hashMin(), stamp.hashMax()))
                .orElse("none (legacy entry: always re-batched)"));
        out.printf("replicated   %s%n", entry.isReplicated() ? "from " + md.getReplicatedFrom() + " at "
                + entry.sourcePosition().map(Object::toString).orElse("?") : "no (produced here)");
        for (int i = 0; i < Math.min(maxMessages, messages.size()); i++) {
            Message m = messages.get(i);
            byte[] p = m.payloadBytes();
            String preview = new String(p, 0, Math.min(p.length, 32), StandardCharsets.UTF_8)
                    .replaceAll("\\p{Cntrl}", ".");
            out.printf("  #%-4d key %-20s hashB 0x%04x  %,d bytes  %s%n", i, m.key().orElse("(none)"),
                    m.hashB(), p.length, preview);
        }
        if (messages.size() > maxMessages) {
            out.printf("  ... %d more%n", messages.size() - maxMessages);
        }
        return 0;
    }
}
