package ml.juno.engine.quantize;

import java.nio.file.Path;
import java.util.List;

/**
 * What {@code juno quantize} was asked to do, with llama-quantize's meaning.
 *
 * @param in                   the source GGUF (tensors in F32, F16 or BF16; others are copied only if unchanged)
 * @param out                  the file to write (replaced)
 * @param type                 target file type, e.g. {@code Q4_K_M}, {@code Q8_0}, {@code F16} ({@link QuantType#parse})
 * @param pure                 {@code --pure}: every quantizable tensor gets the default type, no mix rules
 * @param tensorTypeOverrides  {@code --tensor-type PATTERN=TYPE} specs, first matching pattern wins
 * @param threads              worker threads; 0 means one per available processor
 */
public record QuantizeOptions(Path in, Path out, String type, boolean pure, List<String> tensorTypeOverrides, int threads) {
    public QuantizeOptions {
        if (in == null || out == null || type == null) {
            throw new IllegalArgumentException("quantize needs an input file, an output file and a type");
        }
        if (threads < 0) {
            throw new IllegalArgumentException("threads must be >= 0, was " + threads);
        }
        tensorTypeOverrides = tensorTypeOverrides == null ? List.of() : List.copyOf(tensorTypeOverrides);
    }

    int effectiveThreads() {
        return threads == 0 ? Runtime.getRuntime().availableProcessors() : threads;
    }
}
