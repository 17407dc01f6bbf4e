package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The launcher's {@code juno.*} properties (from {@code JUNO_JAVA_OPTS}) reach the apps it starts, unless the command
 * sets them itself; the launcher's own ({@code juno.home}, {@code juno.parent-pid}) and other namespaces stay behind.
 */
class AppProcessTest {

    @Test
    void launcherJunoPropertiesArePassedOnUnlessTheCommandSetsThem() {
        String[] keys = {"juno.scheduler.quantum-steps", "juno.threads", "juno.parent-pid", "other.tuning"};
        String home = System.getProperty("juno.home");
        try {
            System.setProperty("juno.scheduler.quantum-steps", "0");
            System.setProperty("juno.threads", "9");
            System.setProperty("juno.parent-pid", "12345");
            System.setProperty("juno.home", "/somewhere/juno");
            System.setProperty("other.tuning", "1");
            List<String> cmd = AppProcess.command(Path.of("app.jar"), Map.of("juno.threads", "2"));
            assertTrue(cmd.contains("-Djuno.scheduler.quantum-steps=0"), cmd.toString());
            assertTrue(cmd.contains("-Djuno.threads=2"), cmd.toString());
            assertFalse(cmd.contains("-Djuno.threads=9"), "the command's own value wins: " + cmd);
            assertFalse(cmd.stream().anyMatch(a -> a.startsWith("-Djuno.parent-pid=") || a.startsWith("-Djuno.home=")
                    || a.startsWith("-Dother.tuning=")), cmd.toString());
            assertTrue(cmd.indexOf("-jar") > cmd.indexOf("-Djuno.scheduler.quantum-steps=0"), "properties before -jar: " + cmd);
        } finally {
            for (String k : keys) {
                System.clearProperty(k);
            }
            if (home == null) {
                System.clearProperty("juno.home");
            } else {
                System.setProperty("juno.home", home);
            }
        }
    }

    /** HotSpot's class pattern with a trailing {@code *}: a prefix of the class's dotted name. */
    private static boolean scaled(String className) {
        return AppProcess.CONTROL_PATH.stream().anyMatch(className::startsWith);
    }

    @Test
    void serverJit_scalesTheControlPath_notTheEnginesKernelsOrExperts() {
        assertEquals("-XX:CompileCommand=quiet", AppProcess.SERVER_JIT.get(0), "quiet first, or the JVM prints every command");
        assertEquals(AppProcess.CONTROL_PATH.size() + 1, AppProcess.SERVER_JIT.size());
        for (Class<?> c : List.of(io.grpc.ManagedChannel.class, com.google.protobuf.ByteString.class, ml.juno.node.v1.StepRequest.class,
                ml.juno.coordinator.engine.GenerationLoop.class, ml.juno.engine.step.StepBatch.class)) {
            assertTrue(scaled(c.getName()), c.getName() + " runs once per token: it should reach C2 early");
        }
        for (Class<?> c : List.of(ml.juno.engine.kernel.cpu.CpuBackend.class, ml.juno.engine.kernel.cpu.ComputePool.class,
                ml.juno.engine.moe.ExpertStore.class, ml.juno.engine.model.qwen3moe.Qwen3MoeArchitecture.class,
                ml.juno.engine.model.TransformerDecoder.class)) {
            assertFalse(scaled(c.getName()), c.getName() + " keeps the default thresholds (streamed experts ran ~45% slower at a tenth)");
        }
    }

    @Test
    void serverJit_isWhatTheJvmParses_andWhatTheLaunchersAndTheNodeImagePass() throws Exception {
        // without "quiet" the JVM echoes each command as it parsed it: the package as a class prefix, every method
        List<String> cmd = new ArrayList<>(List.of(AppProcess.javaExecutable()));
        cmd.addAll(AppProcess.SERVER_JIT.subList(1, AppProcess.SERVER_JIT.size()));
        cmd.add("-version");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        for (String pkg : AppProcess.CONTROL_PATH) {
            assertTrue(out.contains("CompileThresholdScaling " + pkg.replace('.', '/') + "*.* double CompileThresholdScaling = 0.100000"),
                    pkg + " parsed as a class prefix with a tenth:\n" + out);
        }
        Path root = Path.of("..");
        // ./juno gives bench the same packages (a bash list), juno.bat the same flags, the node image the same flags
        String sh = Files.readString(root.resolve("juno")).replace("\\\n", " ");
        int from = sh.indexOf("for p in ") + "for p in ".length();
        List<String> shList = Arrays.asList(sh.substring(from, sh.indexOf("; do", from)).trim().split("\\s+"));
        assertEquals(AppProcess.CONTROL_PATH, shList, "./juno's bench list");
        assertTrue(sh.contains("CompileCommand=CompileThresholdScaling,${p}*::*,0.1") && sh.contains("-XX:CompileCommand=quiet"), "./juno");
        String bat = Files.readString(root.resolve("juno.bat"));
        String batFlags = String.join(" ", AppProcess.SERVER_JIT.stream().map(f -> '"' + f + '"').toList());
        assertTrue(bat.contains("set JUNO_JIT=" + batFlags + "\r\n"), "juno.bat's bench flags");
        String node = Files.readString(root.resolve("deploy/docker/node.Dockerfile"));
        assertTrue(node.contains("ENV JUNO_SERVER_JIT=\"" + String.join(" ", AppProcess.SERVER_JIT) + "\"\n"), "node.Dockerfile");
        assertTrue(node.contains("set -f; exec java") && node.contains("$JUNO_SERVER_JIT $JAVA_OPTS"), "node.Dockerfile passes them, unglobbed");
    }
}
