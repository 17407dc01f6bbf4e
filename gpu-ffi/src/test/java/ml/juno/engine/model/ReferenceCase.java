package ml.juno.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** One llama.cpp reference output (models/testdata/reference/*.json, SOURCES.md §4) and the model file it belongs to. */
record ReferenceCase(String name, Path model, JsonNode json) {

    static Path modelsDir() {
        String dir = System.getProperty("juno.models.dir");
        if (dir == null) {
            throw new IllegalStateException("system property juno.models.dir is not set");
        }
        return Path.of(dir);
    }

    static Path modelFile(String fileName) {
        for (Path p : List.of(modelsDir().resolve(fileName), modelsDir().resolve("testdata").resolve(fileName),
                modelsDir().resolve("testdata/tiny-random").resolve(fileName))) {
            if (Files.exists(p)) {
                return p;
            }
        }
        throw new IllegalStateException("model file " + fileName + " not found under " + modelsDir());
    }

    /** Reference cases whose file name starts with one of {@code prefixes}. */
    static Stream<ReferenceCase> load(String... prefixes) {
        Path dir = modelsDir().resolve("testdata/reference");
        ObjectMapper mapper = new ObjectMapper();
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().contains("__"))
                    .filter(p -> Stream.of(prefixes).anyMatch(pre -> p.getFileName().toString().startsWith(pre)))
                    .sorted()
                    .map(p -> {
                        try {
                            JsonNode j = mapper.readTree(p.toFile());
                            return new ReferenceCase(p.getFileName().toString().replace(".json", ""),
                                    modelFile(j.get("model_file").asText()), j);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }).toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    int[] ints(String field) {
        JsonNode a = json.get(field);
        int[] r = new int[a.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = a.get(i).asInt();
        }
        return r;
    }

    float[] floats(String field) {
        JsonNode a = json.get(field);
        float[] r = new float[a.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = (float) a.get(i).asDouble();
        }
        return r;
    }

    /** Weights kind for tolerances: F32, F16 or quantized. */
    String weightKind() {
        String f = model.getFileName().toString();
        if (f.equals("stories260K.gguf") || f.contains("-F32")) {
            return "F32";
        }
        if (f.contains("-F16") || f.startsWith("llama-2-tiny-random")) {
            return "F16";
        }
        return "Q";
    }

    /** Allowed |ours − reference| for a logit of this size: 1e-3 (F32), 1e-3·max(1,|x|) (F16), 2e-2 (quantized). */
    float strictTolerance(float logit) {
        return switch (weightKind()) {
            case "F32" -> 1e-3f;
            case "F16" -> 1e-3f * Math.max(1f, Math.abs(logit));
            default -> 2e-2f;
        };
    }

    @Override
    public String toString() {
        return name;
    }
}
