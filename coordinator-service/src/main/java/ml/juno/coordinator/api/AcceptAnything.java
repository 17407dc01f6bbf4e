package ml.juno.coordinator.api;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * The generation endpoints answer JSON or SSE depending on the body's {@code stream} field, which JAX-RS
 * content negotiation cannot see; OpenAI clients send {@code Accept: application/json} even when they stream.
 * So their Accept header is widened before matching, and each response sets its own Content-Type.
 */
public final class AcceptAnything {

    @ServerRequestFilter(preMatching = true)
    public void widenAccept(ContainerRequestContext request) {
        String path = request.getUriInfo().getPath();
        if (path.equals("/v1/chat/completions") || path.equals("/v1/completions")) {
            request.getHeaders().putSingle(HttpHeaders.ACCEPT, "*/*");
        }
    }
}
