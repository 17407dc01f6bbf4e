package ml.juno.cli;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the Juno installation lives: the repository root that holds {@code juno}, the built apps and
 * the bundled model. The launcher script passes it as {@code -Djuno.home}; without it, the working
 * directory is assumed.
 */
public record JunoHome(Path root) {

    public static JunoHome detect() {
        String home = System.getProperty("juno.home");
        return new JunoHome(Path.of(home != null ? home : ".").toAbsolutePath().normalize());
    }

    public Path bundledModel() {
        return root.resolve("models").resolve("stories260K.gguf");
    }

    /** {@code file} as a user would name it: relative to this home when inside it, else absolute. */
    public String display(Path file) {
        Path f = file.toAbsolutePath().normalize();
        return f.startsWith(root) ? root.relativize(f).toString() : f.toString();
    }

    /** The packaged node app ({@code quarkus-run.jar}). */
    public Path nodeApp() {
        return root.resolve("node-service/target/quarkus-app/quarkus-run.jar");
    }

    /** The packaged coordinator app ({@code quarkus-run.jar}). */
    public Path coordinatorApp() {
        return root.resolve("coordinator-service/target/quarkus-app/quarkus-run.jar");
    }

    /** The app jar must exist, or a clear message says how to build it. */
    static Path requireApp(Path app) {
        if (!Files.isRegularFile(app)) {
            throw new CliException("not built: " + app + " is missing; run ./mvnw -B -DskipTests package (./juno does this on first use)");
        }
        return app;
    }
}
