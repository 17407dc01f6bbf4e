package ml.juno.coordinator.cluster;

/** How the model is split over the nodes. */
public enum Parallelism {
    /** Contiguous layer blocks, balanced by weight bytes (the last one's output head included); activations go from stage to stage. */
    PIPELINE,
    /** Every layer on every node, sliced by heads and FFN width; two all-reduces per layer. */
    TENSOR;

    public static Parallelism parse(String s) {
        for (Parallelism p : values()) {
            if (p.name().equalsIgnoreCase(s)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown parallelism '" + s + "' (expected pipeline or tensor)");
    }
}
