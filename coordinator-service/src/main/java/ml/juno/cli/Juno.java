package ml.juno.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import ml.juno.engine.EngineInfo;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code juno} command line. Each subcommand is a small class; server commands start the packaged
 * Quarkus apps as child processes, tool commands run in this JVM.
 */
@Command(name = "juno",
        mixinStandardHelpOptions = true,
        versionProvider = Juno.Version.class,
        description = "Juno: run GGUF language models on one machine or split across many.",
        subcommands = {
                LocalCommand.class,
                ClusterCommand.class,
                NodeCommand.class,
                CoordinatorCommand.class,
                GenerateCommand.class,
                BenchCommand.class,
                TokenizeCommand.class,
                GgufInfoCommand.class,
                QuantizeCommand.class,
                SynthCommand.class,
                LoraCommand.class,
                MergeCommand.class,
                TestCommand.class,
                MetricsCommand.class,
                CommandLine.HelpCommand.class,
        },
        footer = {"", "With no command, juno serves the bundled model (models/stories260K.gguf) like 'juno cluster' (3 local",
                "node processes, pipeline): API and web console on http://localhost:8080/. Run 'juno COMMAND --help' for a command's options."})
public final class Juno implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line and returns the exit code: 0 ok, 1 failure, 2 usage error. */
    public static int execute(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new Juno());
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler((ex, ignoredArgs) -> {
            CommandLine bad = ex.getCommandLine();
            err.println("juno: " + ex.getMessage().lines().findFirst().orElse("invalid arguments"));
            bad.usage(err);
            return 2;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof CliException || ex instanceof java.io.IOException) {
                // user-facing failures (bad file, bad value): one line, no stack trace
                err.println("juno: " + (ex instanceof java.nio.file.NoSuchFileException ? "no such file: " : "") + ex.getMessage());
                return 1;
            }
            throw ex;
        });
        return cli.execute(args);
    }

    /** No command: serve the bundled model, as {@code juno cluster} with its defaults (3 local nodes, pipeline). */
    @Override
    public Integer call() throws java.io.IOException {
        PrintWriter out = spec.commandLine().getOut();
        JunoHome home = JunoHome.detect();
        Path model = home.bundledModel();
        if (!Files.isRegularFile(model)) {
            throw new CliException("bundled model missing: " + model + "; run 'juno local --model-path FILE' or 'juno --help'");
        }
        ClusterCommand cluster = new ClusterCommand();
        CommandLine cl = new CommandLine(cluster);
        cl.setOut(out);
        cl.setErr(spec.commandLine().getErr());
        cl.parseArgs();
        out.println("Juno " + EngineInfo.VERSION + " (" + EngineInfo.cpuBackendName() + ", Java " + Runtime.version() + ")");
        out.println("Serving " + home.root().relativize(model) + " on http://localhost:" + cluster.apiPort
                + "/ from " + cluster.nodes + " local node processes (" + cluster.cluster.parallelism
                + "; OpenAI API under /v1; 'juno --help' lists every command)");
        out.flush();
        return cluster.call();
    }

    /** Reports the engine version. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"juno " + EngineInfo.VERSION, "Java " + Runtime.version() + ", " + EngineInfo.cpuBackendName()};
        }
    }
}
