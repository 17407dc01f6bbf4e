package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ClusterCommandTest {

    static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Juno.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new String[] {Integer.toString(code), out.toString(), err.toString()};
    }

    @Test
    void coordinator_passesNodesAndWireSettingsToTheApp() {
        CoordinatorCommand c = new CoordinatorCommand();
        String model = java.nio.file.Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toString();
        new CommandLine(c).parseArgs("-m", model, "--nodes", "127.0.0.1:19092,127.0.0.1:19093", "--pType", "TENSOR", "--dtype", "int8",
                "--byteOrder", "big_endian", "--api-port", "8181");
        Map<String, String> p = c.properties();
        assertEquals("127.0.0.1:19092,127.0.0.1:19093", p.get("juno.cluster.nodes"));
        assertEquals("tensor", p.get("juno.cluster.parallelism"));
        assertEquals("INT8", p.get("juno.cluster.dtype"));
        assertEquals("BIG_ENDIAN", p.get("juno.cluster.byte-order"));
        assertEquals("8181", p.get("quarkus.http.port"));
        assertTrue(p.get("juno.model-path").endsWith("stories260K.gguf"));
        assertEquals(System.getenv().getOrDefault("JUNO_HOST", "127.0.0.1"), p.get("quarkus.http.host"), "loopback by default");
    }

    @Test
    void clusterNodes_listenOnLoopbackOnly() {
        Map<String, String> p = ClusterCommand.nodeProperties(0, 19999, Map.of(), java.nio.file.Path.of("/srv/models"));
        assertEquals("127.0.0.1", p.get("quarkus.http.host"));
        assertEquals("/srv/models", p.get("juno.node.models-dir"), "nodes open models only from the model's folder");
    }

    @Test
    void coordinator_refusesBadNodesAndWireValues_withOneLine() {
        String model = java.nio.file.Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toString();
        String[] r = run("coordinator", "-m", model, "--nodes", "localhost");
        assertEquals("1", r[0]);
        assertEquals("juno: --nodes: node address 'localhost' is not host:port", r[2].strip());
        r = run("coordinator", "-m", model, "--nodes", "a:1", "--dtype", "FLOAT8");
        assertEquals("1", r[0]);
        assertTrue(r[2].contains("unknown activation dtype 'FLOAT8'"), r[2]);
        r = run("coordinator", "-m", model, "--nodes", "a:1", "--pType", "data");
        assertTrue(r[2].contains("unknown parallelism 'data'"), r[2]);
    }

    @Test
    void coordinator_withMinNodes_letsNodesJoin_andNeedsExactlyOneWayOfFindingThem() {
        String model = java.nio.file.Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toString();
        CoordinatorCommand c = new CoordinatorCommand();
        new CommandLine(c).parseArgs("-m", model, "--min-nodes", "2", "--node-lease", "5s", "--pType", "tensor");
        Map<String, String> p = c.properties();
        assertEquals(null, p.get("juno.cluster.nodes"), "no fixed node list");
        assertEquals("2", p.get("juno.cluster.min-nodes"));
        assertEquals("5s", p.get("juno.cluster.node-lease"));
        assertEquals("tensor", p.get("juno.cluster.parallelism"));
        String[] r = run("coordinator", "-m", model);
        assertEquals("1", r[0]);
        assertTrue(r[2].contains("--nodes HOST:PORT,… or let them join with --min-nodes N"), r[2]);
        r = run("coordinator", "-m", model, "--nodes", "a:1", "--min-nodes", "1");
        assertTrue(r[2].contains("one of the two"), r[2]);
        r = run("coordinator", "-m", model, "--min-nodes", "0");
        assertTrue(r[2].contains("--min-nodes must be in 1..64"), r[2]);
        r = run("coordinator", "-m", model, "--min-nodes", "1", "--node-lease", "soon");
        assertTrue(r[2].contains("--node-lease 'soon' is not a duration"), r[2]);
    }

    @Test
    void node_withJoin_announcesItselfToTheCoordinator_andAdvertiseNeedsJoin() {
        NodeCommand n = new NodeCommand();
        new CommandLine(n).parseArgs("--join", "http://coordinator:8080", "--advertise", "10.0.0.7:19092", "--models-dir",
                System.getProperty("juno.models.dir"));
        Map<String, String> p = n.properties();
        assertEquals("http://coordinator:8080", p.get("juno.node.join"));
        assertEquals("10.0.0.7:19092", p.get("juno.node.advertise"));
        NodeCommand bad = new NodeCommand();
        new CommandLine(bad).parseArgs("--join", "coordinator:8080");
        CliException e = assertThrows(CliException.class, bad::properties);
        assertTrue(e.getMessage().contains("--join wants the coordinator's URL"), e.getMessage());
        NodeCommand alone = new NodeCommand();
        new CommandLine(alone).parseArgs("--advertise", "10.0.0.7:19092");
        e = assertThrows(CliException.class, alone::properties);
        assertTrue(e.getMessage().contains("it needs --join"), e.getMessage());
    }

    @Test
    void cluster_refusesANodeCountOutsideItsRange() {
        String[] r = run("cluster", "--nodes", "0");
        assertEquals("1", r[0]);
        assertEquals("juno: --nodes must be in 1..64, got 0", r[2].strip());
    }

    @Test
    void theOldCommandLinesSpellings_andDefaults() {
        String model = java.nio.file.Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toString();
        CoordinatorCommand c = new CoordinatorCommand();
        new CommandLine(c).parseArgs("-m", model, "--nodes", "a:1", "--byteOrder", "BE", "--max-tokens", "512", "--temperature", "0.3",
                "--top-k", "40", "--top-p", "0.95");
        Map<String, String> p = c.properties();
        assertEquals("BIG_ENDIAN", p.get("juno.cluster.byte-order"));
        assertEquals("FLOAT16", p.get("juno.cluster.dtype"), "FLOAT16 activations by default, as the old product");
        assertEquals("512", p.get("juno.defaults.max-tokens"));
        assertEquals("0.3", p.get("juno.defaults.temperature"));
        assertEquals("40", p.get("juno.defaults.top-k"));
        assertEquals("0.95", p.get("juno.defaults.top-p"));

        CoordinatorCommand le = new CoordinatorCommand();
        new CommandLine(le).parseArgs("-m", model, "--nodes", "a:1", "--byteOrder", "le");
        assertEquals("LITTLE_ENDIAN", le.properties().get("juno.cluster.byte-order"));
        assertEquals(null, le.properties().get("juno.defaults.max-tokens"), "no flag, no default: the request's own or OpenAI's");

        String[] r = run("coordinator", "-m", model, "--nodes", "a:1", "--temperature", "3");
        assertEquals("1", r[0]);
        assertEquals("juno: --temperature must be in 0..2, got 3.0", r[2].strip());
        r = run("coordinator", "-m", model, "--nodes", "a:1", "--byteOrder", "middle");
        assertEquals("1", r[0]);
    }

    @Test
    void local_takesTheGenerationDefaults_andTheWireDtype() {
        String model = java.nio.file.Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toString();
        LocalCommand l = new LocalCommand();
        new CommandLine(l).parseArgs("-m", model, "--max-tokens", "64", "--temperature", "0", "--dtype", "FLOAT16");
        Map<String, String> p = l.properties();
        assertEquals("64", p.get("juno.defaults.max-tokens"));
        assertEquals("0.0", p.get("juno.defaults.temperature"));
        LocalCommand bad = new LocalCommand();
        new CommandLine(bad).parseArgs("-m", model, "--dtype", "FLOAT8");
        assertThrows(CliException.class, bad::properties, "a bad --dtype is still an error on local");
    }

    @Test
    void verbose_lowersJunosLogsToTrace_onEveryServerCommand() {
        String model = java.nio.file.Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toString();
        String key = "quarkus.log.category.\"ml.juno\".level";
        LocalCommand l = new LocalCommand();
        new CommandLine(l).parseArgs("-m", model, "--verbose");
        assertEquals("TRACE", l.properties().get(key));
        LocalCommand quiet = new LocalCommand();
        new CommandLine(quiet).parseArgs("-m", model);
        assertEquals(null, quiet.properties().get(key));
        CoordinatorCommand c = new CoordinatorCommand();
        new CommandLine(c).parseArgs("-m", model, "--nodes", "a:1", "--verbose");
        assertEquals("TRACE", c.properties().get(key));
        NodeCommand n = new NodeCommand();
        new CommandLine(n).parseArgs("--verbose");
        assertEquals("TRACE", n.properties().get(key));
    }
}
