package ml.juno.engine.gguf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Stream;

/** Where the shipped test models are: the {@code juno.models.dir} system property set by the build. */
public final class TestModels {

    private TestModels() {}

    public static Path dir() {
        String p = System.getProperty("juno.models.dir");
        Path dir = p != null ? Paths.get(p) : Paths.get("..", "models");
        if (!Files.isDirectory(dir)) {
            throw new IllegalStateException("models directory not found: " + dir.toAbsolutePath() + " (set -Djuno.models.dir)");
        }
        return dir;
    }

    public static Path testdata() {
        return dir().resolve("testdata");
    }

    /** Every {@code .gguf} under models/, sorted. */
    public static List<Path> allGgufFiles() {
        try (Stream<Path> s = Files.walk(dir())) {
            return s.filter(f -> f.getFileName().toString().endsWith(".gguf")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
