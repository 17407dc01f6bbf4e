package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.ElementKind;
import jakarta.validation.Path;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.util.Comparator;
import ml.juno.coordinator.service.EngineBusyException;
import ml.juno.coordinator.service.EngineNotReadyException;
import ml.juno.coordinator.service.InvalidRequestException;
import ml.juno.coordinator.service.NotSupportedException;
import ml.juno.coordinator.service.ServiceException;
import ml.juno.coordinator.service.UnknownModelException;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Maps every failure at the edge to OpenAI's error envelope, once: validation and malformed JSON → 400 naming
 * the {@code param}; unknown model → 404; full queue → 429 with {@code Retry-After}; not ready → 503; JAX-RS
 * errors (unknown route, wrong method or media type) keep their status; anything else is a 500 that is logged.
 */
public final class ErrorMappers {

    private static final Logger LOG = Logger.getLogger(ErrorMappers.class);

    @ServerExceptionMapper(priority = 1)
    public Response validation(ConstraintViolationException e) {
        // report one violation, the first by path, so the message is stable
        ConstraintViolation<?> v = e.getConstraintViolations().stream()
                .min(Comparator.comparing(c -> paramOf(c.getPropertyPath())))
                .orElse(null);
        if (v == null) {
            return error(400, ErrorTypes.INVALID_REQUEST, e.getMessage(), null, "invalid_value");
        }
        String param = paramOf(v.getPropertyPath());
        String message = param.isEmpty() ? "The request body " + v.getMessage() : "Invalid '" + param + "': " + v.getMessage();
        return error(400, ErrorTypes.INVALID_REQUEST, message, param.isEmpty() ? null : param, "invalid_value");
    }

    @ServerExceptionMapper(priority = 1)
    public Response json(JsonProcessingException e) {
        return jsonError(e);
    }

    @ServerExceptionMapper(priority = 1)
    public Response jsonMapping(JsonMappingException e) {
        return jsonError(e);
    }

    @ServerExceptionMapper(priority = 1)
    public Response jsonMismatch(MismatchedInputException e) {
        return jsonError(e);
    }

    @ServerExceptionMapper(priority = 1)
    public Response jsonParse(JsonParseException e) {
        return jsonError(e);
    }

    @ServerExceptionMapper(priority = 1)
    public Response service(ServiceException e) {
        return switch (e) {
            case InvalidRequestException i -> error(400, ErrorTypes.INVALID_REQUEST, i.getMessage(), i.param(), "invalid_value");
            case UnknownModelException u -> error(404, ErrorTypes.INVALID_REQUEST, u.getMessage(), "model", "model_not_found");
            case EngineBusyException b -> Response.fromResponse(
                            error(429, ErrorTypes.RATE_LIMIT, b.getMessage(), null, "queue_full"))
                    .header("Retry-After", Math.max(1, (b.retryAfter().toMillis() + 999) / 1000))
                    .build();
            case NotSupportedException n -> error(501, ErrorTypes.INVALID_REQUEST, n.getMessage(), null, "not_supported");
            case EngineNotReadyException n -> Response.fromResponse(
                            error(503, ErrorTypes.UNAVAILABLE, n.getMessage(), null, "model_not_ready"))
                    .header("Retry-After", 1)
                    .build();
        };
    }

    /** A route nobody serves: OpenAI's words ({@code Invalid URL (POST /v1/nope)}), in its error envelope. */
    @ServerExceptionMapper(priority = 1)
    public Response notFound(NotFoundException e, UriInfo uri, Request request) {
        if (e.getCause() != null || !isNoRoute(e)) {
            return web(e);
        }
        return error(404, ErrorTypes.INVALID_REQUEST, "Invalid URL (" + request.getMethod() + " /" + trimmed(uri) + ")", null, "unknown_url");
    }

    /** A route that does not take this method: 405 with {@code Allow}, in OpenAI's error envelope. */
    @ServerExceptionMapper(priority = 1)
    public Response notAllowed(NotAllowedException e, UriInfo uri, Request request) {
        String allow = e.getResponse().getHeaderString("Allow");
        return Response.fromResponse(error(405, ErrorTypes.INVALID_REQUEST, "Method " + request.getMethod() + " is not allowed for /"
                        + trimmed(uri) + (allow != null ? "; use " + allow : ""), null, "method_not_allowed"))
                .header("Allow", allow)
                .build();
    }

    private static String trimmed(UriInfo uri) {
        String path = uri.getPath();
        return path.startsWith("/") ? path.substring(1) : path;
    }

    /** RESTEasy's own "no resource method" 404, not one a resource threw on purpose. */
    private static boolean isNoRoute(NotFoundException e) {
        String m = e.getMessage();
        return m == null || m.startsWith("HTTP 404") || m.startsWith("Unable to find matching target resource method");
    }

    @ServerExceptionMapper(priority = 1)
    public Response web(WebApplicationException e) {
        Throwable cause = e.getCause();
        if (cause instanceof JsonProcessingException j) {
            return jsonError(j);
        }
        if (cause instanceof ConstraintViolationException c) {
            return validation(c);
        }
        int status = e.getResponse().getStatus();
        String type = status == 404 ? ErrorTypes.NOT_FOUND : status >= 500 ? ErrorTypes.SERVER : ErrorTypes.INVALID_REQUEST;
        String message = status == 400 && (e.getMessage() == null || e.getMessage().startsWith("HTTP 400"))
                ? "We could not parse the JSON body of your request."
                : e.getMessage();
        if (status >= 500) {
            LOG.error("request failed", e);
        }
        return error(status, type, message, null, null);
    }

    @ServerExceptionMapper(priority = 2)
    public Response unexpected(Throwable e) {
        if (ml.juno.coordinator.api.ClientHangups.isHangup(e)) {
            LOG.debugf("a client hung up before its request was read: %s", e.getMessage());
            return error(400, ErrorTypes.INVALID_REQUEST, "The connection was closed", null, null); // nobody is left to read it
        }
        LOG.error("request failed", e);
        return error(500, ErrorTypes.SERVER, "The server had an error while processing your request: " + e, null, null);
    }

    private static Response jsonError(JsonProcessingException e) {
        if (e instanceof UnsupportedParameters.Refused r) {
            return error(400, ErrorTypes.INVALID_REQUEST, r.getOriginalMessage(), r.param(), r.code());
        }
        String param = e instanceof JsonMappingException m ? paramOf(m) : "";
        String detail = e.getOriginalMessage();
        String message = param.isEmpty()
                ? "We could not parse the JSON body of your request: " + detail
                : "Invalid type or value for '" + param + "': " + detail;
        return error(400, ErrorTypes.INVALID_REQUEST, message, param.isEmpty() ? null : param, param.isEmpty() ? "invalid_json" : "invalid_type");
    }

    static Response error(int status, String type, String message, String param, String code) {
        return Response.status(status)
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(ErrorResponse.of(message, type, param, code))
                .build();
    }

    /** JSON path of a mapping failure, in the wire's field names: {@code messages[0].content}. */
    static String paramOf(JsonMappingException e) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                sb.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                sb.append('[').append(ref.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    /**
     * Property path of a violation on a resource's body parameter, in the wire's field names: skips the method
     * and parameter nodes, turns {@code maxTokens} into {@code max_tokens}, writes indexes and keys as {@code [i]}.
     */
    static String paramOf(Path path) {
        StringBuilder sb = new StringBuilder();
        for (Path.Node node : path) {
            ElementKind kind = node.getKind();
            if (kind == ElementKind.METHOD || kind == ElementKind.PARAMETER || kind == ElementKind.CONSTRUCTOR
                    || kind == ElementKind.RETURN_VALUE || kind == ElementKind.CROSS_PARAMETER) {
                continue;
            }
            if (node.isInIterable() && !sb.isEmpty()) {
                sb.append('[').append(node.getIndex() != null ? node.getIndex() : node.getKey()).append(']');
            }
            if (kind == ElementKind.PROPERTY && node.getName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                snakeCase(node.getName(), sb);
            }
        }
        return sb.toString();
    }

    private static void snakeCase(String name, StringBuilder sb) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isUpperCase(c)) {
                sb.append('_').append(Character.toLowerCase(c));
            } else {
                sb.append(c);
            }
        }
    }
}
