package ml.juno.engine.kernel;

import java.util.Locale;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.kernel.cpu.NativeKernels;
import ml.juno.engine.tensor.GgmlType;

/**
 * Chooses the backend a process computes with, once at start-up: the callers that load models ({@code juno} commands,
 * the node service) select one here and pass it in, so the model layer never knows which kernels run. Today every
 * backend is the CPU's: Juno's native kernels where they load for this CPU, else the Java (Vector API) kernels; both
 * give bit-identical results.
 */
public final class Backends {
    private static final System.Logger LOG = System.getLogger("ml.juno.engine.backend");
    private static volatile boolean choiceLogged;

    private Backends() {}

    /** The backend kinds a user can ask for. */
    public enum Kind {
        /** Native kernels where they loaded, else Java (the default). */
        AUTO,
        NATIVE,
        JAVA;

        /** {@code native}, {@code java} or {@code auto} (any case); anything else is refused naming the choices. */
        public static Kind parse(String s) {
            String v = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
            return switch (v) {
                case "", "auto" -> AUTO;
                case "native" -> NATIVE;
                case "java" -> JAVA;
                default -> throw new IllegalArgumentException("unknown backend '" + s + "' (choose native or java)");
            };
        }
    }

    /** The kind asked for: system property {@code juno.backend}, else environment {@code JUNO_BACKEND}, else auto. */
    public static Kind requestedKind() {
        String p = System.getProperty("juno.backend");
        return Kind.parse(p != null ? p : System.getenv("JUNO_BACKEND"));
    }

    /** A backend of the {@link #requestedKind requested kind} with {@code threads} compute threads. */
    public static Backend select(int threads) {
        return select(requestedKind(), threads);
    }

    /**
     * A backend of {@code kind} with {@code threads} compute threads (the calling thread included). Native when asked
     * for (or by default) and the library loaded for this CPU; otherwise Java, and one log line (the first choice of
     * the process) says why. The caller owns it: closing the model it is passed to closes it.
     */
    public static Backend select(Kind kind, int threads) {
        if (kind == Kind.JAVA) {
            logOnce(System.Logger.Level.INFO, "Juno backend: java (asked for)");
            return new CpuBackend(threads, null);
        }
        NativeKernels.Loaded l = NativeKernels.load();
        if (l.ok()) {
            logOnce(System.Logger.Level.INFO, "Juno backend: native (" + l.kernels().isa()
                    + (l.kernels().amx() ? ", AMX tiles for Q4_K" : "") + ")");
            return new CpuBackend(threads, l.kernels());
        }
        logOnce(kind == Kind.NATIVE ? System.Logger.Level.WARNING : System.Logger.Level.INFO,
                "Juno backend: java, native kernels unavailable: " + l.problem());
        return new CpuBackend(threads, null);
    }

    /** Whether the backends compute with weights of {@code type} (what a model's tensors are checked against). */
    public static boolean supports(GgmlType type) {
        return CpuBackend.supports(type);
    }

    /**
     * {@code count} elements (whole blocks) of {@code type} from byte {@code off} of {@code s}, decoded to floats as the
     * backends decode weights: for the small tensors (norms, biases) a model keeps as floats.
     */
    public static void decode(GgmlType type, java.lang.foreign.MemorySegment s, long off, float[] dst, int dstOff, int count) {
        CpuBackend.decode(type, s, off, dst, dstOff, count);
    }

    private static void logOnce(System.Logger.Level level, String line) {
        if (!choiceLogged) {
            choiceLogged = true;
            LOG.log(level, line);
        }
    }
}
