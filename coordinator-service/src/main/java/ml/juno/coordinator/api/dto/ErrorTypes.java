package ml.juno.coordinator.api.dto;

/** The {@code type} values of the error envelope, as OpenAI names them. */
final class ErrorTypes {
    static final String INVALID_REQUEST = "invalid_request_error";
    static final String NOT_FOUND = "not_found_error";
    static final String RATE_LIMIT = "rate_limit_error";
    static final String UNAVAILABLE = "service_unavailable_error";
    static final String SERVER = "server_error";

    private ErrorTypes() {
    }
}
