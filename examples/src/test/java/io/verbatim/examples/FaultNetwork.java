package io.verbatim.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * The network between the clusters of a fault test, on loopback (which holds all of 127.0.0.0/8): each
 * cluster's node binds 127.0.0.1 on its own ports; the link from cluster {@code i} to cluster {@code j} is a
 * {@link FaultProxy} on {@code 127.0.(10+i).(10+j)} with {@code j}'s ports, which {@code i}'s configuration
 * names as {@code j}'s advertised address; and {@code j} advertises itself at its {@link FrontDoor} on {@code
 * 127.0.20.(10+j)}, which hands each session to its caller's link. So every byte between two clusters crosses
 * the link of its direction, whoever chose the address.
 */
final class FaultNetwork implements AutoCloseable {
    static final String NODE_ADDRESS = "127.0.0.1";

    /** A cluster's name and ports: its admin port first, then its brokers'. */
    record Member(String name, List<Integer> ports) {
        Member {
            ports = List.copyOf(ports);
        }
    }

    private final List<Member> members;
    private final Map<String, FaultProxy> links = new LinkedHashMap<>();
    private final Map<String, FrontDoor> doors = new LinkedHashMap<>();

    FaultNetwork(List<Member> members, long seed) {
        if (members.size() < 2 || members.size() > 100) {
            throw new IllegalArgumentException("members: 2 to 100 clusters, got " + members.size());
        }
        this.members = List.copyOf(members);
        Random seeds = new Random(seed);
        for (int i = 0; i < members.size(); i++) {
            for (int j = 0; j < members.size(); j++) {
                if (i != j) {
                    Member from = members.get(i);
                    Member to = members.get(j);
                    links.put(key(from.name(), to.name()), new FaultProxy(from.name() + "->" + to.name(),
                            address(linkAddress(i, j)), address(NODE_ADDRESS), to.ports(), seeds.nextLong()));
                }
            }
        }
        for (int j = 0; j < members.size(); j++) {
            Member to = members.get(j);
            doors.put(to.name(), new FrontDoor(to.name(), address(frontAddress(j)), to.ports(),
                    caller -> Optional.ofNullable(links.get(key(caller, to.name())))));
        }
    }

    FaultNetwork start() throws IOException {
        for (FaultProxy p : links.values()) {
            p.start();
        }
        for (FrontDoor d : doors.values()) {
            d.start();
        }
        return this;
    }

    static String linkAddress(int from, int to) {
        return "127.0." + (10 + from) + "." + (10 + to);
    }

    static String frontAddress(int cluster) {
        return "127.0.20." + (10 + cluster);
    }

    List<Member> members() {
        return members;
    }

    /** Where {@code viewer}'s configuration says {@code cluster} is: its own front door, or the link to a peer. */
    String advertised(String viewer, String cluster) {
        int v = index(viewer);
        int c = index(cluster);
        return v == c ? frontAddress(c) : linkAddress(v, c);
    }

    FaultProxy link(String from, String to) {
        FaultProxy p = links.get(key(from, to));
        if (p == null) {
            throw new IllegalArgumentException("no link " + from + " -> " + to + " (clusters: "
                    + members.stream().map(Member::name).toList() + ")");
        }
        return p;
    }

    /** Both links between {@code a} and {@code b}. */
    List<FaultProxy> between(String a, String b) {
        return List.of(link(a, b), link(b, a));
    }

    List<FaultProxy> links() {
        return List.copyOf(links.values());
    }

    /** Sessions the front doors could not tell the caller of, over all clusters. */
    long unattributed() {
        return doors.values().stream().mapToLong(FrontDoor::unattributed).sum();
    }

    /** Every link passes everything again. */
    void healAll() {
        for (FaultProxy p : links.values()) {
            try {
                p.heal();
            } catch (IOException e) {
                throw new UncheckedIOException("healing " + p, e);
            }
        }
    }

    @Override
    public void close() {
        doors.values().forEach(FrontDoor::close);
        links.values().forEach(FaultProxy::close);
    }

    private int index(String name) {
        for (int i = 0; i < members.size(); i++) {
            if (members.get(i).name().equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no cluster '" + name + "' (clusters: "
                + members.stream().map(Member::name).toList() + ")");
    }

    private static String key(String from, String to) {
        return from + "->" + to;
    }

    private static InetAddress address(String ip) {
        try {
            return InetAddress.getByName(ip);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address: " + ip, e);
        }
    }

    /** Every link's counts, one line each, for a failure's message. */
    String describe() {
        List<String> lines = new ArrayList<>();
        links.values().forEach(p -> lines.add(p.name() + " " + p.counts() + " open " + p.open()));
        doors.forEach((n, d) -> lines.add("front door of " + n + ": handed over " + d.handedOver() + ", unattributed "
                + d.unattributed() + (d.strangers().isEmpty() ? "" : ", first lines " + d.strangers())));
        return String.join("\n", lines);
    }
}
