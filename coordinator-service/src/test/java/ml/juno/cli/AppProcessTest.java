package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
}
