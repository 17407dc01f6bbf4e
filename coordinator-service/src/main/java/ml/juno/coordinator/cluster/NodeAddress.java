package ml.juno.coordinator.cluster;

import java.util.ArrayList;
import java.util.List;

/** Where a node listens (gRPC and health on one port). */
public record NodeAddress(String host, int port) {

    public NodeAddress {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("node host is empty");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("node port must be in 1..65535, got " + port);
        }
    }

    /** {@code host:port}. */
    public static NodeAddress parse(String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new IllegalArgumentException("node address '" + s + "' is not host:port");
        }
        try {
            return new NodeAddress(s.substring(0, colon).trim(), Integer.parseInt(s.substring(colon + 1).trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("node address '" + s + "' has no numeric port");
        }
    }

    /** A comma-separated list {@code host:port,host:port}. */
    public static List<NodeAddress> parseList(String s) {
        List<NodeAddress> out = new ArrayList<>();
        for (String part : s.split(",")) {
            if (!part.isBlank()) {
                out.add(parse(part.trim()));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("no node addresses in '" + s + "'");
        }
        return out;
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
