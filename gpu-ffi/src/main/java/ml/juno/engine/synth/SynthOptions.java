package ml.juno.engine.synth;

import java.nio.file.Path;

/**
 * What {@code juno synth} writes.
 *
 * @param preset    the model shape
 * @param type      output type as {@code juno quantize} accepts it (e.g. {@code Q4_K_M}, {@code Q8_0}, {@code F16})
 * @param out       the GGUF file to write (replaced)
 * @param seed      random seed; the same seed, preset and type give the same file, whatever the thread count
 * @param vocabFrom a GGUF whose {@code tokenizer.*} keys are copied, or {@code null} for the synthetic vocabulary
 * @param threads   worker threads; 0 means one per available processor
 */
public record SynthOptions(SynthPreset preset, String type, Path out, long seed, Path vocabFrom, int threads) {
    public SynthOptions {
        if (preset == null || type == null || out == null) {
            throw new IllegalArgumentException("synth needs a preset, a type and an output file");
        }
        if (threads < 0) {
            throw new IllegalArgumentException("threads must be >= 0, was " + threads);
        }
    }

    int effectiveThreads() {
        return threads == 0 ? Runtime.getRuntime().availableProcessors() : threads;
    }
}
