package ml.juno.model.wire;

/**
 * What one shard answers for one step: the hidden states a pipeline stage passes on, or the logits of the rows that
 * asked (the last stage, tensor rank 0), or neither (another tensor rank), or the reason the step failed here.
 * {@code ProtoMapping} maps it to the wire's {@code StepOutput}.
 *
 * @param stepId       the step
 * @param activations  {@code [rows, embedding]} hidden states, or null
 * @param logits       {@code [rows that asked, vocab]} FLOAT32 logits, or null
 * @param error        why the step failed on this shard (then no tensors), or null
 * @param computeNanos time the shard spent on the step, all-reduces excluded (a stage that sends its rows to the next
 *                     stage: until they leave, the waits for its input excluded)
 * @param reductions   all-reduces the shard did with its tensor-parallel peers in the step
 * @param reduceNanos  time they took (encoding, sending, waiting for the peers' partials, summing)
 * @param peerBytesSent bytes of partials the shard sent to its peers in the step
 * @param hidden       {@code [rows that asked, embedding]} FLOAT32 final hidden states (after the output norm), or null
 * @param sampled      the logit rows drawn on this shard (the step's samplers), in order; {@code logits} then holds
 *                     only the rows left to the coordinator
 * @param inputWaitNanos time a pipeline stage waited for its previous stage's rows
 */
public record ShardOutput(long stepId, Activations activations, Activations logits, String error, long computeNanos,
                          int reductions, long reduceNanos, long peerBytesSent, Activations hidden,
                          java.util.List<ml.juno.engine.sampling.DrawResult> sampled, long inputWaitNanos) {
    /** An output without rows drawn here. */
    public ShardOutput(long stepId, Activations activations, Activations logits, String error, long computeNanos,
                       int reductions, long reduceNanos, long peerBytesSent, Activations hidden) {
        this(stepId, activations, logits, error, computeNanos, reductions, reduceNanos, peerBytesSent, hidden, java.util.List.of(), 0);
    }

    /** An output without final hidden states. */
    public ShardOutput(long stepId, Activations activations, Activations logits, String error, long computeNanos,
                       int reductions, long reduceNanos, long peerBytesSent) {
        this(stepId, activations, logits, error, computeNanos, reductions, reduceNanos, peerBytesSent, null);
    }

    public ShardOutput {
        sampled = sampled == null ? java.util.List.of() : java.util.List.copyOf(sampled);
        if (error != null && (activations != null || logits != null || hidden != null)) {
            throw new IllegalArgumentException("step " + stepId + ": a failed step carries no tensors");
        }
        if (activations != null && logits != null) {
            throw new IllegalArgumentException("step " + stepId + ": hidden states or logits, not both");
        }
    }

    /** The step failed on this shard, and why. */
    public static ShardOutput failed(long stepId, String error) {
        return new ShardOutput(stepId, null, null, error, 0, 0, 0, 0);
    }
}
