package ml.juno.cli;

import java.io.PrintWriter;
import ml.juno.engine.EngineInfo;
import java.util.concurrent.Callable;
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
                ChatCommand.class,
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
                MatrixCommand.class,
                CertsCommand.class,
                CommandLine.HelpCommand.class,
        },
        footer = {"",
                "With no command, juno serves the bundled model (models/stories260K.gguf) as%n"
                + "'juno cluster' does: 3 local node processes, pipeline; API and web console on%n"
                + "http://localhost:8080/. Options without a command are 'juno cluster' options,%n"
                + "as in the old command line: juno --model-path M --pType tensor --dtype INT8.%n"
                + "Run 'juno COMMAND --help' for a command's options."})
public final class Juno implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        CliLogging.install(System.err);
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
        if (servesWithClusterOptions(args)) {
            // the old command line: './juno' and './juno --model-path M --pType tensor …' are 'juno cluster' with a banner
            ((ClusterCommand) cli.getSubcommands().get("cluster").getCommand()).banner = true;
            String[] cluster = new String[args.length + 1];
            cluster[0] = "cluster";
            System.arraycopy(args, 0, cluster, 1, args.length);
            return cli.execute(cluster);
        }
        return cli.execute(args);
    }

    /** No arguments, or options first (other than help and version): the top level takes {@code juno cluster}'s options. */
    static boolean servesWithClusterOptions(String[] args) {
        return args.length == 0 || args[0].startsWith("-") && !TOP_LEVEL_OPTIONS.contains(args[0]);
    }

    private static final java.util.Set<String> TOP_LEVEL_OPTIONS = java.util.Set.of("-h", "--help", "-V", "--version");

    /** Unreachable from {@link #execute} (no command means {@code juno cluster}); kept for picocli, which needs a callable. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return 0;
    }

    /** Reports the engine version. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"juno " + EngineInfo.VERSION, "Java " + Runtime.version() + ", " + EngineInfo.cpuBackendName()};
        }
    }
}
