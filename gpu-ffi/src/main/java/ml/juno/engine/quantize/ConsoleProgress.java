package ml.juno.engine.quantize;

import java.io.Console;
import java.io.PrintStream;

/**
 * A one-line progress bar on standard error, drawn only when the process talks to a terminal (so logs and pipes
 * stay clean). Redraws only when the shown percentage changes; ends the line at 100%.
 */
public final class ConsoleProgress implements ProgressListener {
    private static final int WIDTH = 40;

    private final PrintStream out;
    private final boolean enabled;
    private int lastPermille = -1;
    private String lastStage = "";

    private ConsoleProgress(PrintStream out, boolean enabled) {
        this.out = out;
        this.enabled = enabled;
    }

    /** A bar on {@code System.err} when {@code System.console()} is a terminal, otherwise a listener that does nothing. */
    public static ProgressListener forTerminal() {
        Console c = System.console();
        return c != null && c.isTerminal() ? new ConsoleProgress(System.err, true) : ProgressListener.NONE;
    }

    /** Draws on {@code out} unconditionally (for tests and callers that know better). */
    public static ConsoleProgress to(PrintStream out) {
        return new ConsoleProgress(out, true);
    }

    @Override
    public void progress(String stage, long done, long total) {
        if (!enabled || total <= 0) {
            return;
        }
        int permille = (int) Math.min(1000, done * 1000 / total);
        if (permille == lastPermille && stage.equals(lastStage)) {
            return;
        }
        lastPermille = permille;
        lastStage = stage;
        int filled = permille * WIDTH / 1000;
        StringBuilder sb = new StringBuilder(WIDTH + 32).append('\r').append(stage).append(" [");
        for (int i = 0; i < WIDTH; i++) {
            sb.append(i < filled ? '#' : '.');
        }
        sb.append("] ").append(permille / 10).append('.').append(permille % 10).append('%');
        if (permille >= 1000) {
            sb.append(System.lineSeparator());
        }
        out.print(sb);
        out.flush();
    }
}
