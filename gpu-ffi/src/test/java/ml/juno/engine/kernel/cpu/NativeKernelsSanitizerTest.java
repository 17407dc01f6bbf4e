package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The native kernels under AddressSanitizer and UBSan, built from the same sources and flags as the library
 * (build-native.sh with JUNO_NATIVE_SANITIZE): (1) src/test/c/juno_cpu_asan.c drives every kernel with buffers of
 * exactly the bytes it may touch, for every type and variant; (2) a JVM with the sanitizer runtime preloaded runs every
 * test model on a sanitized library ({@code NativeBackendModelsTest.main}), comparing it with the Java backend. Where
 * the machine has no C compiler there is no native library either (NativeKernelsTest asserts that).
 */
class NativeKernelsSanitizerTest {
    private static final Path MODULE = Path.of("").toAbsolutePath();
    private static final Path SCRIPT = MODULE.resolve("src/main/c/build-native.sh");

    private static boolean compilerPresent() {
        try {
            Process p = new ProcessBuilder("gcc", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    private static String run(List<String> command, Map<String, String> env, int timeoutSeconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().remove("JUNO_NATIVE"); // a suite run without the main library still checks the kernels
        pb.environment().putAll(env);
        Path log = Files.createTempFile("juno-sanitizer", ".log");
        pb.redirectOutput(log.toFile());
        Process p = pb.start();
        boolean done = p.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        Files.deleteIfExists(log);
        assertTrue(done, "timed out: " + command + "\n" + out);
        assertEquals(0, p.exitValue(), command + " failed:\n" + out);
        return out;
    }

    @Test
    void everyKernel_staysInsideItsBuffers_andEveryVariantAgrees() throws Exception {
        if (!compilerPresent()) {
            assertFalse(NativeKernels.load().ok(), "no compiler, yet a native library");
            return;
        }
        Path dir = MODULE.resolve("target/native-sanitized");
        run(List.of("bash", SCRIPT.toString(), dir.toString(), MODULE.resolve("src/test/c/juno_cpu_asan.c").toString()),
                Map.of("JUNO_NATIVE_SANITIZE", "address,undefined"), 600);
        String out = run(List.of(dir.resolve("juno-cpu-test").toString()), Map.of(), 600);
        Matcher m = Pattern.compile("(\\d+) passed, (\\d+) failed").matcher(out);
        assertTrue(m.find(), out);
        assertEquals("0", m.group(2), out);
        assertTrue(Integer.parseInt(m.group(1)) > 1000, "too few checks: " + out);
        assertFalse(out.contains("ERROR: AddressSanitizer") || out.contains("runtime error"), out);
    }

    @Test
    void everyTestModel_runsCleanOnASanitizedLibrary() throws Exception {
        if (!compilerPresent()) {
            assertFalse(NativeKernels.load().ok(), "no compiler, yet a native library");
            return;
        }
        Path dir = MODULE.resolve("target/native-asan-lib");
        run(List.of("bash", SCRIPT.toString(), dir.toString()), Map.of("JUNO_NATIVE_SANITIZE", "address"), 600);
        Path lib = dir.resolve("libjunocpu.so");
        assertTrue(Files.isRegularFile(lib), "no sanitized library");
        String asan = run(List.of("gcc", "-print-file-name=libasan.so"), Map.of(), 60).trim();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--add-modules=jdk.incubator.vector");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Djuno.native.library=" + lib);
        cmd.add("-Xss4m");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("ml.juno.engine.model.NativeBackendModelsTest");
        cmd.add(System.getProperty("juno.models.dir"));
        // the JVM handles SIGSEGV itself (implicit null checks): the sanitizer must leave those signals alone
        String out = run(cmd, Map.of("LD_PRELOAD", asan,
                "ASAN_OPTIONS", "detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allow_user_segv_handler=1:use_sigaltstack=0:abort_on_error=1"),
                600);
        assertFalse(out.contains("ERROR: AddressSanitizer"), out);
        Matcher m = Pattern.compile("models compared: (\\d+)").matcher(out);
        assertTrue(m.find(), out);
        assertTrue(Integer.parseInt(m.group(1)) >= 10, out);
    }
}
