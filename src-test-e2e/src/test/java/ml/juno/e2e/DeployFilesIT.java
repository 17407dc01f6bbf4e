package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployment files, checked by the real tools without running anything: the compose file by Debian's
 * {@code docker-compose config} (no Docker engine needed), the systemd units by {@code systemd-analyze verify} (stderr
 * included: it exits 0 on some bad values), and the EC2 script in its dry-run mode. {@code deploy/tools/install-validators.sh}
 * installs the two validators when missing; if it cannot, these tests fail.
 */
class DeployFilesIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
    static final Path DEPLOY = ROOT.resolve("deploy");
    static final Duration TIMEOUT = Duration.ofMinutes(2);
    static final List<String> SERVICES = List.of("node1", "node2", "node3", "coordinator");

    @TempDir
    Path tmp;

    @BeforeAll
    static void installValidators() throws Exception {
        Shell.Result r = Shell.run(List.of("bash", DEPLOY.resolve("tools/install-validators.sh").toString()), ROOT, Map.of(),
                Duration.ofMinutes(10));
        assertEquals(0, r.exitCode(), "deploy/tools/install-validators.sh could not install docker-compose/systemd:\n" + r.describe());
    }

    // ---- docker-compose ---------------------------------------------------------------------------------------

    @Test
    void composeFile_isValid() throws Exception {
        Shell.Result r = compose(DEPLOY.resolve("compose.yaml"), Map.of(), "config", "-q");
        assertEquals(0, r.exitCode(), r.describe());
        assertEquals("", r.err().strip(), "no warnings either");
    }

    @Test
    void composeFile_runsThreeNodesAndACoordinator_pipelineByDefault_tensorByEnvironment() throws Exception {
        String pipeline = resolved(Map.of());
        for (String s : SERVICES) {
            assertTrue(pipeline.contains("\n  " + s + ":\n"), "service " + s + " in:\n" + pipeline);
        }
        assertTrue(pipeline.contains("- node1:19092,node2:19092,node3:19092"), pipeline);
        assertTrue(pipeline.contains("- --pType\n    - pipeline\n"), pipeline);
        assertEquals(4, count(pipeline, "http://localhost:(8080|19092)/q/health/ready"), "every service checks readiness");
        assertEquals(4, count(pipeline, "restart: unless-stopped"), "every service restarts");
        assertEquals(4, count(pipeline, "read_only: true"), "the model is mounted read-only everywhere");
        assertEquals(4, count(pipeline, "target: /models\n"), pipeline);
        assertTrue(pipeline.contains("dockerfile: deploy/docker/node.Dockerfile"), pipeline);
        assertTrue(pipeline.contains("dockerfile: deploy/docker/coordinator.Dockerfile"), pipeline);

        String tensor = resolved(Map.of("JUNO_PTYPE", "tensor", "JUNO_MODEL", "llama.gguf", "JUNO_API_PORT", "18080"));
        assertTrue(tensor.contains("- --pType\n    - tensor\n"), tensor);
        assertTrue(tensor.contains("- /models/llama.gguf\n"), tensor);
        assertTrue(tensor.contains("published: 18080") || tensor.contains("18080:8080"), tensor);
    }

    @Test
    void composeValidator_rejectsAnUnknownKey() throws Exception {
        String text = Files.readString(DEPLOY.resolve("compose.yaml")).replace("\n  node1:\n", "\n  node1:\n    bogus_key: 1\n");
        Path bad = Files.writeString(tmp.resolve("compose.yaml"), text);
        Shell.Result r = compose(bad, Map.of(), "config", "-q");
        assertTrue(r.exitCode() != 0, "a broken file must fail the check:\n" + r.describe());
        assertTrue(r.err().contains("bogus_key"), r.describe());
    }

    @Test
    void dockerfiles_startFromTemurin25_withTheEnginesJvmFlags() throws Exception {
        for (String name : List.of("node.Dockerfile", "coordinator.Dockerfile")) {
            String f = Files.readString(DEPLOY.resolve("docker").resolve(name));
            assertTrue(f.contains("FROM eclipse-temurin:25-jre"), name);
            assertTrue(f.contains("target/quarkus-app"), name + " copies the packaged app");
            assertTrue(f.contains("\nUSER juno\n"), name + " runs unprivileged");
        }
        String entry = Files.readString(DEPLOY.resolve("docker/juno-entrypoint.sh"));
        String node = Files.readString(DEPLOY.resolve("docker/node.Dockerfile"));
        for (String flag : List.of("--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-XX:LoopUnrollLimit=300")) {
            assertTrue(entry.contains(flag) && node.contains(flag), flag);
        }
        Shell.Result syntax = Shell.run(List.of("sh", "-n", DEPLOY.resolve("docker/juno-entrypoint.sh").toString()), ROOT,
                Map.of(), TIMEOUT);
        assertEquals(0, syntax.exitCode(), syntax.describe());
    }

    // ---- Windows launcher ---------------------------------------------------------------------------------------

    @Test
    void windowsLauncher_runsTheSameMainClass_withTheSameJvmFlags_asTheShellLauncher() throws Exception {
        String sh = Files.readString(ROOT.resolve("juno")).replace("\\\n", " ");
        String bat = Files.readString(ROOT.resolve("juno.bat"));
        assertFalse(bat.replace("\r\n", "").contains("\n"), "juno.bat keeps CRLF line ends (cmd.exe misreads LF-only labels)");
        String shJava = line(sh, "exec \"$JAVA_HOME/bin/java\"");
        String batJava = line(bat, "\"%JAVA_HOME%\\bin\\java\"");
        assertEquals(jvmFlags(shJava), jvmFlags(batJava), "the JVM flags of ./juno and juno.bat");
        assertTrue(jvmFlags(shJava).contains("--add-modules=jdk.incubator.vector"), shJava);
        for (String java : List.of(shJava, batJava)) {
            assertTrue(java.contains(" ml.juno.cli.Juno "), "main class in: " + java);
            assertTrue(java.contains("JUNO_JAVA_OPTS"), "extra JVM flags from JUNO_JAVA_OPTS in: " + java);
            assertTrue(java.contains("-Djuno.home="), java);
        }
        // lib/boot holds JBoss Logging, which the cluster executor logs with (juno bench --nodes runs it in the CLI)
        assertTrue(shJava.contains("$COORD/app/*:$COORD/lib/main/*:$COORD/lib/boot/*"), shJava);
        assertTrue(batJava.contains("%COORD%\\app\\*;%COORD%\\lib\\main\\*;%COORD%\\lib\\boot\\*"), batJava);
        for (String both : List.of("JUNO_REBUILD", "-B -q -DskipTests package", "quarkus-run.jar", "Java 25 is required")) {
            assertTrue(sh.contains(both) && bat.contains(both), both + " in both launchers");
        }
        assertTrue(bat.contains("mvnw.cmd"), "juno.bat builds with the Windows Maven Wrapper");
    }

    /** The one line of {@code text} that starts with {@code start} (after indentation). */
    private static String line(String text, String start) {
        List<String> hits = text.lines().map(String::strip).filter(l -> l.startsWith(start)).toList();
        assertEquals(1, hits.size(), "one line starting with " + start + ": " + hits);
        return hits.get(0);
    }

    /** The fixed JVM flags of a java command line: the tokens starting with "-" before the class path. */
    private static List<String> jvmFlags(String javaLine) {
        List<String> flags = new ArrayList<>();
        for (String token : javaLine.split("\\s+")) {
            if (token.equals("-cp")) {
                break;
            }
            if (token.startsWith("-") && !token.startsWith("-Djuno.home")) {
                flags.add(token);
            }
        }
        return flags;
    }

    // ---- systemd ----------------------------------------------------------------------------------------------

    @Test
    void systemdUnits_verifyWithoutAnyComplaint() throws Exception {
        Shell.Result r = verify(List.of(unitCopy("juno-node.service"), unitCopy("juno-coordinator.service")));
        assertEquals(0, r.exitCode(), r.describe());
        assertEquals("", r.err().strip(), "systemd-analyze exits 0 on some bad values, so stderr must be empty");
    }

    @Test
    void systemdVerify_reportsABadValueOnStderr() throws Exception {
        Path bad = unitCopy("juno-node.service");
        Files.writeString(bad, Files.readString(bad).replace("ProtectSystem=strict", "ProtectSystem=strickt"));
        Shell.Result r = verify(List.of(bad));
        assertTrue(r.err().contains("strickt"), "the check this suite relies on must see bad values:\n" + r.describe());
    }

    @Test
    void systemdUnits_runUnprivileged_hardened_restartOnFailure_withEverySettingInTheirEnvFile() throws Exception {
        for (String role : List.of("node", "coordinator")) {
            String unit = Files.readString(DEPLOY.resolve("systemd/juno-" + role + ".service"));
            for (String line : List.of("User=juno", "Restart=on-failure", "NoNewPrivileges=yes", "ProtectSystem=strict",
                    "ProtectHome=yes", "PrivateTmp=yes", "CapabilityBoundingSet=", "EnvironmentFile=/etc/juno/" + role + ".env",
                    "ExecStart=/opt/juno/juno " + role + " ")) {
                assertTrue(unit.contains("\n" + line), role + " unit lacks " + line);
            }
            assertTrue(unit.contains("ReadWritePaths=/var/lib/juno /var/log/juno"), role);
            String env = Files.readString(DEPLOY.resolve("systemd/" + role + ".env"));
            for (String variable : variables(unit)) {
                assertTrue(Pattern.compile("(?m)^" + variable + "=\\S").matcher(env).find(),
                        role + ".env must set " + variable + ", which ExecStart uses");
            }
        }
    }

    // ---- EC2 ----------------------------------------------------------------------------------------------------

    @Test
    void awsDryRun_printsEveryCommand_andCallsNoAws() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path called = tmp.resolve("aws-was-called");
        Path aws = Files.writeString(bin.resolve("aws"), "#!/bin/sh\ntouch '" + called + "'\nexit 1\n");
        Files.setPosixFilePermissions(aws, PosixFilePermissions.fromString("rwxr-xr-x"));
        Shell.Result r = provision(bin, "--nodes", "3", "--bucket", "juno-releases", "--model-url",
                "https://models.example.com/llama.gguf", "--api-cidr", "203.0.113.0/24", "--ptype", "tensor", "--dry-run");
        assertEquals(0, r.exitCode(), r.describe());
        assertFalse(Files.exists(called), "--dry-run must not call aws");
        String out = r.out();
        List<String> commands = out.lines().filter(l -> l.startsWith("+ ")).toList();
        assertTrue(commands.stream().anyMatch(c -> c.startsWith("+ aws s3 cp ") && c.contains("s3://juno-releases/")), out);
        assertEquals(1, commands.stream().filter(c -> c.startsWith("+ aws ec2 create-security-group ")).count(), out);
        assertTrue(commands.stream().anyMatch(c -> c.contains("authorize-security-group-ingress") && c.contains("--port 19092")
                && c.contains("--source-group")), "nodes reachable only inside the group:\n" + out);
        assertTrue(commands.stream().anyMatch(c -> c.contains("authorize-security-group-ingress") && c.contains("--port 8080")
                && c.contains("--cidr 203.0.113.0/24")), out);
        assertFalse(commands.stream().anyMatch(c -> c.contains("--port 22")), "no SSH unless --ssh-cidr");
        List<String> launches = commands.stream().filter(c -> c.startsWith("+ aws ec2 run-instances ")).toList();
        assertEquals(4, launches.size(), "three nodes and a coordinator:\n" + out);
        for (int i = 1; i <= 3; i++) {
            String tag = "Value=juno-node" + i;
            assertEquals(1, launches.stream().filter(c -> c.contains(tag)).count(), tag);
        }
        assertEquals(1, launches.stream().filter(c -> c.contains("Value=juno-coordinator")).count());

        String node2 = userData(out, "node2");
        String coordinator = userData(out, "the coordinator");
        for (String ud : List.of(node2, coordinator)) {
            assertTrue(ud.contains("apt-get install -y -q --no-install-recommends temurin-25-jre"), ud);
            assertTrue(ud.contains("useradd --system"), ud);
            assertSyntax(ud);
        }
        assertTrue(node2.contains(Files.readString(DEPLOY.resolve("systemd/juno-node.service")).strip()), "the unit, verbatim");
        assertTrue(node2.contains("\nJUNO_NODE_ID=node2\n"), node2);
        assertTrue(node2.contains("systemctl enable --now juno-node.service"), node2);
        assertTrue(coordinator.contains("\nJUNO_NODES=10.0.0.11:19092,10.0.0.12:19092,10.0.0.13:19092\n"), coordinator);
        assertTrue(coordinator.contains("\nJUNO_PTYPE=tensor\n"), coordinator);
        assertTrue(coordinator.contains("systemctl enable --now juno-coordinator.service"), coordinator);
    }

    @Test
    void awsBadArguments_areUsageErrors() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Shell.Result zero = provision(bin, "--nodes", "0", "--bucket", "b", "--model-url", "https://x/m.gguf",
                "--api-cidr", "0.0.0.0/0", "--dry-run");
        assertEquals(2, zero.exitCode(), zero.describe());
        assertTrue(zero.err().contains("--nodes must be a number in 1..64, got '0'"), zero.describe());
        Shell.Result cidr = provision(bin, "--nodes", "2", "--bucket", "b", "--model-url", "https://x/m.gguf",
                "--api-cidr", "everyone", "--dry-run");
        assertEquals(2, cidr.exitCode(), cidr.describe());
        assertTrue(cidr.err().contains("--api-cidr"), cidr.describe());
        Shell.Result unknown = provision(bin, "--nodes", "2", "--frobnicate");
        assertEquals(2, unknown.exitCode());
        assertTrue(unknown.err().contains("unknown option '--frobnicate'"), unknown.describe());
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    private static Shell.Result compose(Path file, Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("docker-compose", "-f", file.toString()));
        cmd.addAll(List.of(args));
        return Shell.run(cmd, ROOT, env, TIMEOUT);
    }

    private static String resolved(Map<String, String> env) throws IOException, InterruptedException {
        Shell.Result r = compose(DEPLOY.resolve("compose.yaml"), env, "config");
        assertEquals(0, r.exitCode(), r.describe());
        return r.out();
    }

    private static int count(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    /** A copy of a unit whose launcher path points at an executable stub here (verify checks that it exists). */
    private Path unitCopy(String name) throws IOException {
        Path stub = tmp.resolve("opt-juno-juno");
        if (!Files.exists(stub)) {
            Files.writeString(stub, "#!/bin/sh\n");
            Files.setPosixFilePermissions(stub, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        String unit = Files.readString(DEPLOY.resolve("systemd").resolve(name));
        assertTrue(unit.contains("ExecStart=/opt/juno/juno "), name);
        return Files.writeString(tmp.resolve(name), unit.replace("ExecStart=/opt/juno/juno ", "ExecStart=" + stub + " "));
    }

    private static Shell.Result verify(List<Path> units) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("systemd-analyze", "verify", "--man=no"));
        units.forEach(u -> cmd.add(u.toString()));
        return Shell.run(cmd, ROOT, Map.of("SYSTEMD_LOG_COLOR", "0"), TIMEOUT);
    }

    /** {@code ${NAME}} references in a unit. */
    private static Set<String> variables(String unit) {
        Set<String> names = new LinkedHashSet<>();
        Matcher m = Pattern.compile("\\$\\{([A-Z_]+)}").matcher(unit);
        while (m.find()) {
            names.add(m.group(1));
        }
        assertFalse(names.isEmpty());
        return names;
    }

    private static Shell.Result provision(Path bin, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", DEPLOY.resolve("aws/provision.sh").toString()));
        cmd.addAll(List.of(args));
        return Shell.run(cmd, ROOT, Map.of("PATH", bin + ":/usr/bin:/bin", "TMPDIR", bin.getParent().toString()), TIMEOUT);
    }

    /** The user-data the dry run printed for {@code who} (its lines are prefixed with "#   "). */
    private static String userData(String out, String who) {
        StringBuilder sb = new StringBuilder();
        boolean in = false;
        for (String line : out.lines().toList()) {
            if (line.startsWith("# user-data of ")) {
                in = line.startsWith("# user-data of " + who + " ");
            } else if (in && line.startsWith("#   ")) {
                sb.append(line.substring(4)).append('\n');
            } else if (in && line.equals("#")) {
                sb.append('\n');
            } else {
                in = false;
            }
        }
        assertFalse(sb.isEmpty(), "no user-data printed for " + who + ":\n" + out);
        return sb.toString();
    }

    private void assertSyntax(String script) throws IOException, InterruptedException {
        Path f = Files.writeString(Files.createTempFile(tmp, "user-data", ".sh"), script);
        Shell.Result r = Shell.run(List.of("bash", "-n", f.toString()), ROOT, Map.of(), TIMEOUT);
        assertEquals(0, r.exitCode(), "user-data is not valid bash:\n" + r.describe());
    }
}
