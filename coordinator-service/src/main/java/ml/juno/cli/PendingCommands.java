package ml.juno.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

/**
 * Commands of the design that this build does not implement yet. Each says so plainly and exits 1;
 * none pretends to work. Each moves to its own class when its issue lands.
 */
final class PendingCommands {

    private PendingCommands() {}

    abstract static class Pending implements Callable<Integer> {
        @Unmatched
        String[] ignored;

        @Override
        public Integer call() {
            Command c = getClass().getAnnotation(Command.class);
            throw new CliException("'juno " + c.name() + "' is not implemented in this build yet");
        }
    }

    @Command(name = "lora", description = "Train and play LoRA adapters (not implemented yet).")
    static final class Lora extends Pending {}

    @Command(name = "merge", description = "Merge LoRA adapters into a GGUF (not implemented yet).")
    static final class Merge extends Pending {}

}
