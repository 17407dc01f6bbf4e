package ml.juno.coordinator.api;

import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.cluster.ClusterSettings;
import ml.juno.coordinator.cluster.NodeAddress;
import ml.juno.coordinator.cluster.NodeRegistry;

/**
 * The node registry over HTTP ({@code juno coordinator --min-nodes N}): {@code POST /v1/cluster/nodes}
 * {@code {"id", "port", "address"?}} is a node's announcement (join, or renew its lease; without {@code address} the
 * node is reached at the address its request came from, on {@code port}); {@code DELETE /v1/cluster/nodes/HOST:PORT}
 * is a node leaving; {@code GET /v1/cluster/nodes} lists the members in rank order. The API's keys guard it like every
 * other route ({@link ApiGate}); a coordinator with a fixed node list ({@code --nodes}) answers 409.
 */
@Path("/v1/cluster/nodes")
public class ClusterNodesResource {

    /** A node's announcement. */
    public record Announce(String id, Integer port, String address) {
    }

    private final NodeRegistry registry;
    private final boolean enabled;

    ClusterNodesResource(NodeRegistry registry, ClusterSettings cluster) {
        this.registry = registry;
        this.enabled = cluster.nodes().isEmpty() && cluster.minNodes().isPresent();
    }

    private static Response error(int status, String message) {
        return Response.status(status).type(MediaType.APPLICATION_JSON)
                .entity(Map.of("error", Map.of("message", message, "type", status == 409 ? "conflict" : "invalid_request_error"))).build();
    }

    private Response disabled() {
        return error(409, "this coordinator has a fixed node list (--nodes); start it with --min-nodes N to let nodes join (juno node --join)");
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response announce(Announce a, @Context HttpServerRequest request) {
        if (!enabled) {
            return disabled();
        }
        if (a == null) {
            return error(400, "the body must be {\"id\": NAME, \"port\": PORT} or {\"id\": NAME, \"address\": \"HOST:PORT\"}");
        }
        NodeAddress address;
        try {
            if (a.address() != null && !a.address().isBlank()) {
                address = NodeAddress.parse(a.address().strip());
            } else if (a.port() != null) {
                address = new NodeAddress(remoteHost(request), a.port());
            } else {
                return error(400, "an announcement needs 'port' (reached at the address it comes from) or 'address' (HOST:PORT)");
            }
        } catch (IllegalArgumentException e) {
            return error(400, e.getMessage());
        }
        if (a.id() != null && (a.id().length() > 128 || !a.id().matches("[A-Za-z0-9._:-]*"))) {
            return error(400, "node id '" + a.id() + "' must be at most 128 letters, digits, '.', '_', ':' or '-'");
        }
        boolean joined = registry.announce(address, a.id());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("address", address.toString());
        body.put("joined", joined);
        body.put("leaseSeconds", registry.lease().toSeconds());
        body.put("members", registry.members().size());
        return Response.ok(body).build();
    }

    /** Where the request came from; an IPv6 address in brackets so that HOST:PORT dials it. */
    private static String remoteHost(HttpServerRequest request) {
        String host = request.remoteAddress().hostAddress();
        return host.contains(":") ? "[" + host + "]" : host;
    }

    @DELETE
    @Path("/{address}")
    @Produces(MediaType.APPLICATION_JSON)
    public Response leave(@PathParam("address") String address) {
        if (!enabled) {
            return disabled();
        }
        NodeAddress a;
        try {
            a = NodeAddress.parse(address);
        } catch (IllegalArgumentException e) {
            return error(400, e.getMessage());
        }
        return registry.leave(a, "it said so") ? Response.ok(Map.of("address", a.toString(), "left", true)).build()
                : error(404, "node " + a + " is not a member");
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Response members() {
        if (!enabled) {
            return disabled();
        }
        List<Map<String, Object>> out = registry.members().stream()
                .map(m -> Map.<String, Object>of("address", m.address().toString(), "id", m.id())).toList();
        return Response.ok(Map.of("nodes", out, "leaseSeconds", registry.lease().toSeconds())).build();
    }
}
