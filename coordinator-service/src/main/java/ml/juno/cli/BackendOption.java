package ml.juno.cli;

import java.util.List;
import java.util.Map;
import ml.juno.engine.kernel.Backends;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code --backend native|java}, shared by every command that runs a model. Unset means auto: the native kernels where
 * they load, else Java, unless {@code -Djuno.backend} or {@code JUNO_BACKEND} says otherwise. In-process commands
 * {@link #applyToThisJvm apply} the choice as the system property {@code juno.backend} before any model loads; commands
 * that start JVMs pass it on ({@link #properties}, {@link #args}). A bad value is a usage error (exit code 2); a bad
 * inherited one (property or environment) a one-line error (exit code 1) before anything starts.
 */
final class BackendOption {

    /** The system property the engine reads ({@link Backends#requestedKind}); environment JUNO_BACKEND is its fallback. */
    static final String PROPERTY = "juno.backend";

    @Option(names = "--backend", paramLabel = "native|java", converter = KindConverter.class,
            description = "CPU kernels: native (Juno's C kernels; Java with one log line where they cannot load) or java "
                    + "(Vector API). Default: env JUNO_BACKEND, else native where it loads.")
    Backends.Kind kind;

    /** The flag's value, lower case ({@code native}, {@code java}, {@code auto}), or {@code null} when not given. */
    String value() {
        return kind == null ? null : kind.name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Sets {@code juno.backend} in this JVM when the flag was given; otherwise checks that what the engine would read
     * ({@code -Djuno.backend} or {@code JUNO_BACKEND}) is a backend, so a bad environment is one line before any work.
     */
    void applyToThisJvm() {
        if (kind != null) {
            System.setProperty(PROPERTY, value());
        } else {
            checkInherited();
        }
    }

    /**
     * {@code juno.backend} for a child app's JVM: the flag's value, else this JVM's {@code -Djuno.backend} (from
     * {@code JUNO_JAVA_OPTS}); empty when neither is set, and the child reads the JUNO_BACKEND it inherits.
     */
    Map<String, String> properties() {
        String v = forChildren();
        return v == null ? Map.of() : Map.of(PROPERTY, v);
    }

    /** {@code --backend VALUE} for a child {@code juno} command, chosen as {@link #properties}; empty when unset. */
    List<String> args() {
        String v = forChildren();
        return v == null ? List.of() : List.of("--backend", v);
    }

    private String forChildren() {
        if (kind != null) {
            return value();
        }
        checkInherited();
        String p = System.getProperty(PROPERTY);
        return p == null ? null : Backends.Kind.parse(p).name().toLowerCase(java.util.Locale.ROOT);
    }

    private static void checkInherited() {
        try {
            Backends.requestedKind();
        } catch (IllegalArgumentException e) {
            String from = System.getProperty(PROPERTY) != null ? "-D" + PROPERTY : "JUNO_BACKEND";
            throw new CliException(from + ": " + e.getMessage());
        }
    }

    /** {@link Backends.Kind#parse}; its message ("unknown backend 'x' (choose native or java)") becomes the usage error. */
    static final class KindConverter implements ITypeConverter<Backends.Kind> {
        @Override
        public Backends.Kind convert(String value) {
            try {
                return Backends.Kind.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
