package ml.juno.engine.kernel.cpu;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.management.ObjectName;

/**
 * Keeps C2 from inlining the vector kernels into the loops that call them. A Vector API kernel is only fast when C2
 * inlines every vector operation inside it; a caller that inlines a kernel spends its own inlining budget
 * ({@code NodeCountInliningCutoff}, not settable in product JVMs) on it, and whatever no longer fits is left as a call,
 * which boxes the vectors it passes: measured 3–300 MB of allocation per matmul and 1.3–3× slower, depending on which
 * methods happened to be compiled first. Compiled as their own roots, the kernels always get their whole budget.
 *
 * <p>Installed once, before the kernels compile, through the HotSpot {@code Compiler.directives_add} diagnostic command
 * (the programmatic form of {@code -XX:CompileCommand=dontinline}), so every launcher (server, CLI, tests) gets it. On a
 * JVM without that command the kernels still run, only with run-to-run speed variance. {@code -Djuno.jit.directives=false}
 * leaves the JIT to its defaults.
 */
final class JitDirectives {
    private static final String PKG = "ml/juno/engine/kernel/cpu/";
    /**
     * The kernels by method name, in every class of the package: each block type's kernel class has its own
     * ({@link CpuTypeTraits}), so one pattern per method covers them all.
     */
    private static final String[] KERNELS = {
        "*.decodeVector", "*.decodeQuants", "*.toFloatLanes",
        "*.dotFloat4x2", "*.dotFloat4", "*.dotFloat", "*.q6Halves", "*.q6Combine", "*.dotFloatQ6",
        "*.kCorrection32", "*.kCorrections", "CpuBackend.softmaxChunks",
    };
    private static volatile boolean installed;

    private JitDirectives() {}

    static synchronized void install() {
        if (installed || "false".equals(System.getProperty("juno.jit.directives"))) {
            return;
        }
        installed = true;
        StringBuilder json = new StringBuilder("[{ match: \"" + PKG + "*.*\", inline: [");
        for (int i = 0; i < KERNELS.length; i++) {
            json.append(i == 0 ? "" : ", ").append("\"-").append(PKG).append(KERNELS[i]).append('"');
        }
        json.append("] }]");
        Path file = null;
        try {
            file = Files.createTempFile("juno-jit", ".json");
            Files.writeString(file, json);
            ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "compilerDirectivesAdd", new Object[] {new String[] {file.toString()}}, new String[] {String[].class.getName()});
        } catch (Exception | LinkageError e) {
            System.getLogger(JitDirectives.class.getName()).log(System.Logger.Level.WARNING,
                    "could not install the JIT directives for the CPU kernels (speed may vary between runs): " + e);
        } finally {
            if (file != null) {
                try {
                    Files.deleteIfExists(file);
                } catch (java.io.IOException ignored) {
                    // a temp file left behind is harmless
                }
            }
        }
    }
}
