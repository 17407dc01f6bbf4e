package ml.juno.coordinator.sampling;

import java.util.List;

/**
 * Finds stop strings in streamed text, across piece boundaries, without ever letting one leak out.
 * Each {@link #feed} returns the text that is safe to show now; a tail that could still grow into a
 * stop string is held back until the next piece settles it. One instance per sequence.
 */
public final class StopStringMatcher {

    /** What one {@link #feed} yields: text to emit now and whether a stop string was found. */
    public record Result(String text, boolean stopped, String stopString) {
        static final Result EMPTY = new Result("", false, "");
    }

    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean stopped;

    public StopStringMatcher(List<String> stopStrings) {
        for (String s : stopStrings) {
            if (s == null || s.isEmpty()) {
                throw new IllegalArgumentException("stop strings must not be empty");
            }
        }
        this.stops = List.copyOf(stopStrings);
    }

    /**
     * Adds a decoded piece.
     *
     * @param stopAllowed false while min-tokens is not reached: a complete stop string is then let through
     *                    (but a tail that could still become one is held back, so it can stop later)
     * @return text safe to emit; when {@code stopped}, the text before the stop string, and the matcher is done
     */
    public Result feed(String piece, boolean stopAllowed) {
        if (stopped) {
            throw new IllegalStateException("matcher already stopped");
        }
        held.append(piece);
        if (stops.isEmpty()) {
            return release(held.length());
        }
        if (stopAllowed) {
            int bestAt = -1;
            String best = "";
            for (String s : stops) {
                int at = held.indexOf(s);
                if (at >= 0 && (bestAt < 0 || at < bestAt)) {
                    bestAt = at;
                    best = s;
                }
            }
            if (bestAt >= 0) {
                stopped = true;
                String text = held.substring(0, bestAt);
                held.setLength(0);
                return new Result(text, true, best);
            }
        }
        return release(held.length() - heldBackLength());
    }

    /** At the end of the sequence (any reason but a stop string): everything still held back. */
    public String flush() {
        String text = held.toString();
        held.setLength(0);
        return text;
    }

    public boolean stopped() {
        return stopped;
    }

    /** Longest tail of {@code held} that is a proper prefix of some stop string. */
    private int heldBackLength() {
        int longest = 0;
        int n = held.length();
        for (String s : stops) {
            for (int len = Math.min(s.length() - 1, n); len > longest; len--) {
                if (regionEquals(n - len, s, len)) {
                    longest = len;
                    break;
                }
            }
        }
        return longest;
    }

    private boolean regionEquals(int from, String s, int len) {
        for (int i = 0; i < len; i++) {
            if (held.charAt(from + i) != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private Result release(int upTo) {
        if (upTo <= 0) {
            return Result.EMPTY;
        }
        String text = held.substring(0, upTo);
        held.delete(0, upTo);
        return new Result(text, false, "");
    }
}
