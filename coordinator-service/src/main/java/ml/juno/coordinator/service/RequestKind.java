package ml.juno.coordinator.service;

/** Which endpoint a generation came from; a tag on the request metrics. */
public enum RequestKind {
    CHAT("chat"), COMPLETION("completion");

    private final String tag;

    RequestKind(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
