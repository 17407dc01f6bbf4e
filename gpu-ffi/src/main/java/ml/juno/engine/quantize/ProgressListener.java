package ml.juno.engine.quantize;

/**
 * Hears how far a long job (quantizing, generating a model) has got. Called from one thread, the one that runs
 * the job, at most a few times a second.
 */
@FunctionalInterface
public interface ProgressListener {

    /** Ignores progress. */
    ProgressListener NONE = (stage, done, total) -> { };

    /**
     * @param stage what is being done, e.g. {@code "quantize"}
     * @param done  work units finished (bytes of input)
     * @param total work units in all; {@code done == total} is reported once at the end
     */
    void progress(String stage, long done, long total);
}
