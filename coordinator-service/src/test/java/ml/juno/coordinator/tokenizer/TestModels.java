package ml.juno.coordinator.tokenizer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;

/** Locates the shipped test models (system property {@code juno.models.dir}) and caches their tokenizers. */
final class TestModels {
    private static final Map<String, Tokenizer> CACHE = new ConcurrentHashMap<>();

    private TestModels() {
    }

    static Path dir() {
        String d = System.getProperty("juno.models.dir");
        if (d == null) {
            throw new IllegalStateException("system property juno.models.dir is not set (the build sets it)");
        }
        return Path.of(d);
    }

    static Path vocabDir() {
        return dir().resolve("testdata/vocab");
    }

    /** Finds a model file by name anywhere under the models directory. */
    static Path find(String fileName) {
        try (Stream<Path> s = Files.walk(dir())) {
            return s.filter(p -> p.getFileName().toString().equals(fileName)).findFirst()
                    .orElseThrow(() -> new IllegalStateException("test model " + fileName + " not found under " + dir()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Tokenizer tokenizer(String fileName) {
        return CACHE.computeIfAbsent(fileName, f -> {
            try (GgufFile g = GgufFile.open(find(f))) {
                return Tokenizer.fromGguf(g);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
