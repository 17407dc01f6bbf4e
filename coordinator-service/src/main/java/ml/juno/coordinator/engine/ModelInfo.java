package ml.juno.coordinator.engine;

import java.nio.file.Path;

/**
 * What an engine serves.
 *
 * @param architecture  {@code general.architecture} ("llama", …)
 * @param contextLength positions per sequence this engine accepts (the model's, capped or as configured)
 * @param vocabSize     logits per token
 * @param parameters    weight elements in the file
 * @param weightBytes   bytes of the weight tensors in the file
 * @param path          the GGUF file
 */
public record ModelInfo(String architecture, int contextLength, int vocabSize, long parameters, long weightBytes,
                        Path path) {
}
