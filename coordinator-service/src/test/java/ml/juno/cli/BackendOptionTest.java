package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import ml.juno.engine.EngineInfo;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.cpu.NativeKernels;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** {@code --backend native|java} on every command that runs a model: parsed, refused when unknown, passed on to children. */
class BackendOptionTest {

    static final String MODEL = GenerateCommandTest.STORIES;

    private String before;

    @BeforeEach
    void remember() {
        before = System.getProperty(BackendOption.PROPERTY);
    }

    /** In-process commands set juno.backend for this JVM; the tests put back what was there. */
    @AfterEach
    void restore() {
        restoreBackendProperty(before);
    }

    static void restoreBackendProperty(String value) {
        if (value == null) {
            System.clearProperty(BackendOption.PROPERTY);
        } else {
            System.setProperty(BackendOption.PROPERTY, value);
        }
    }

    /** The kind and isa the engine gives for {@code kind} on this machine (native only where its library loads). */
    static String[] expected(Backends.Kind kind) {
        NativeKernels.Loaded l = NativeKernels.load();
        if (kind != Backends.Kind.JAVA && l.ok()) {
            return new String[] {"native", l.kernels().isa()};
        }
        return new String[] {"java", "vector" + EngineInfo.FLOAT_SPECIES.vectorBitSize()};
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"generate", "bench", "local", "node", "cluster", "test"})
    void anUnknownBackend_isAUsageError_namingTheChoices(String command) {
        List<String> args = new java.util.ArrayList<>(List.of(command, "--backend", "cuda"));
        if (command.equals("generate")) {
            args.addAll(List.of("--prompt", "Once"));
        }
        JunoCliTest.Run r = JunoCliTest.run(args.toArray(String[]::new));
        assertEquals(2, r.code(), r.err());
        String first = r.err().lines().findFirst().orElse("");
        assertTrue(first.startsWith("juno: ") && first.contains("--backend") && first.contains("unknown backend 'cuda'")
                && first.contains("native") && first.contains("java"), first);
        assertTrue(r.err().contains("Usage: juno " + command), "the usage follows, as for other bad flags:\n" + r.err());
        assertEquals("", r.out(), "nothing ran");
        assertEquals(before, System.getProperty(BackendOption.PROPERTY), "a refused value is not applied");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"generate", "bench", "local", "node", "cluster", "test"})
    void everyCommandThatRunsAModel_documentsTheFlag(String command) {
        JunoCliTest.Run r = JunoCliTest.run(command, "--help");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("--backend=native|java"), r.out());
        assertTrue(r.out().contains("JUNO_BACKEND"), r.out());
    }

    @Test
    void coordinatorOverNodes_hasNoBackendFlag_itsNodesCompute() {
        JunoCliTest.Run r = JunoCliTest.run("coordinator", "--nodes", "a:1", "--backend", "java");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("juno: Unknown option") && r.err().contains("'--backend'"), r.err());
    }

    @Test
    void valuesAreCaseInsensitive_andAutoIsAccepted() {
        LocalCommand c = new LocalCommand();
        new CommandLine(c).parseArgs("--model-path", MODEL, "--backend", "NATIVE");
        assertEquals("native", c.properties().get("juno.backend"));
        LocalCommand auto = new LocalCommand();
        new CommandLine(auto).parseArgs("--model-path", MODEL, "--backend", "Auto");
        assertEquals("auto", auto.properties().get("juno.backend"), "auto given explicitly overrides JUNO_BACKEND in the child");
    }

    @Test
    void local_passesTheChoiceToTheServerJvm_onlyWhenGiven() {
        LocalCommand c = new LocalCommand();
        new CommandLine(c).parseArgs("--model-path", MODEL, "--backend", "java");
        assertEquals("java", c.properties().get("juno.backend"));
        List<String> cmd = AppProcess.command(Path.of("app.jar"), c.properties(), c.jvmOptions());
        assertTrue(cmd.contains("-Djuno.backend=java"), cmd.toString());

        LocalCommand unset = new LocalCommand();
        new CommandLine(unset).parseArgs("--model-path", MODEL);
        assertFalse(unset.properties().containsKey("juno.backend"), "unset: the child reads JUNO_BACKEND from the environment it inherits");
    }

    @Test
    void node_passesTheChoiceToItsJvm() {
        NodeCommand n = new NodeCommand();
        new CommandLine(n).parseArgs("--port", "19999", "--backend", "native");
        Map<String, String> p = n.properties();
        assertEquals("native", p.get("juno.backend"));
        assertEquals("19999", p.get("quarkus.http.port"));
        NodeCommand unset = new NodeCommand();
        new CommandLine(unset).parseArgs("--port", "19999");
        assertFalse(unset.properties().containsKey("juno.backend"));
    }

    @Test
    void cluster_passesTheChoiceToEveryNodeJvm() {
        ClusterCommand c = new ClusterCommand();
        new CommandLine(c).parseArgs("-m", MODEL, "--backend", "java");
        Map<String, String> p = ClusterCommand.nodeProperties(2, 19500, c.backend.properties(), java.nio.file.Path.of("/m"));
        assertEquals("java", p.get("juno.backend"));
        assertEquals("node-2", p.get("juno.node.id"));
        assertEquals("19500", p.get("quarkus.http.port"));
        ClusterCommand unset = new ClusterCommand();
        new CommandLine(unset).parseArgs("-m", MODEL);
        assertFalse(ClusterCommand.nodeProperties(0, 19500, unset.backend.properties(), java.nio.file.Path.of("/m")).containsKey("juno.backend"));
    }

    @Test
    void test_passesTheChoiceToItsClusters() {
        TestCommand t = new TestCommand();
        new CommandLine(t).parseArgs("-m", MODEL, "--backend", "JAVA");
        List<String> cmd = t.clusterCommand(Path.of(MODEL), "pipeline", "FLOAT32", 18123, Path.of("/tmp/logs"));
        int at = cmd.indexOf("cluster");
        assertTrue(at > 0, cmd.toString());
        assertEquals(List.of("--backend", "java"), cmd.subList(cmd.size() - 2, cmd.size()), cmd.toString());
        TestCommand unset = new TestCommand();
        new CommandLine(unset).parseArgs("-m", MODEL);
        assertFalse(unset.clusterCommand(Path.of(MODEL), "tensor", "INT8", 18123, Path.of("/tmp/logs")).contains("--backend"));
    }

    @Test
    void aJunoBackendPropertyOfThisJvm_goesOnToChildren_theFlagWins() {
        System.setProperty(BackendOption.PROPERTY, "Java"); // as -Djuno.backend=Java in JUNO_JAVA_OPTS
        LocalCommand c = new LocalCommand();
        new CommandLine(c).parseArgs("--model-path", MODEL);
        assertEquals("java", c.properties().get("juno.backend"));
        NodeCommand n = new NodeCommand();
        new CommandLine(n).parseArgs("--backend", "native");
        assertEquals("native", n.properties().get("juno.backend"));
    }

    @Test
    void inProcessCommands_setTheSystemPropertyTheEngineReads() {
        BenchCommand bench = new BenchCommand();
        new CommandLine(bench).parseArgs("--backend", "java");
        bench.backend.applyToThisJvm();
        assertEquals("java", System.getProperty("juno.backend"));
        assertEquals(Backends.Kind.JAVA, Backends.requestedKind());
    }

    @Test
    void aBadInheritedChoice_isOneLineErrorBeforeAnyWork() {
        System.setProperty(BackendOption.PROPERTY, "cuda");
        JunoCliTest.Run r = JunoCliTest.run("bench", "-m", MODEL, "-p", "4", "-n", "2", "-r", "1");
        assertEquals(1, r.code(), r.err());
        assertEquals("juno: -Djuno.backend: unknown backend 'cuda' (choose native or java)", r.err().strip());
        LocalCommand c = new LocalCommand();
        new CommandLine(c).parseArgs("--model-path", MODEL);
        CliException e = assertThrows(CliException.class, c::properties);
        assertTrue(e.getMessage().contains("choose native or java"), e.getMessage());
    }
}
