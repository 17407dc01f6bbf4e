package ml.juno.coordinator.tools;

/**
 * One streamed choice's text, split as it arrives: content that is surely not a call goes out at once; text
 * that is or may become a call is held. At the end the whole text is parsed exactly as a blocking answer is
 * ({@link ToolSyntax#parse}), and {@link #finish} gives the content still to send plus the calls, so the streamed
 * content always equals the blocking {@code content} and the calls are the same. Leading and trailing whitespace
 * is held back too, since the blocking content is stripped. Not thread-safe (one choice, one output thread).
 */
public final class ToolCallStream {

    /** What is left to send when the choice ends: {@code content} continues what was streamed. */
    public record End(String content, ToolOutput output) {
    }

    private final ToolSyntax syntax;
    private final StringBuilder text = new StringBuilder();
    private final StringBuilder emitted = new StringBuilder();
    private int sent; // characters of text already sent (or dropped as leading whitespace)
    private boolean holding;

    public ToolCallStream(ToolSyntax syntax) {
        this.syntax = syntax;
    }

    /** Adds the next piece of the answer; returns the content that may be sent now ("" for none). */
    public String feed(String piece) {
        text.append(piece);
        if (holding || piece.isEmpty()) {
            return "";
        }
        boolean start = emitted.isEmpty();
        String pending = text.substring(sent);
        ToolSyntax.Split split = syntax.split(pending, start);
        holding = split.holdRest();
        int end = split.safe();
        while (end > 0 && Character.isWhitespace(pending.charAt(end - 1))) {
            end--;
        }
        int begin = 0;
        if (start) {
            while (begin < end && Character.isWhitespace(pending.charAt(begin))) {
                begin++;
            }
        }
        if (begin >= end) {
            if (start) {
                sent += begin;
            }
            return "";
        }
        String out = pending.substring(begin, end);
        sent += end;
        emitted.append(out);
        return out;
    }

    /** The answer is over: the calls, and the content not yet sent. */
    public End finish() {
        ToolOutput out = syntax.parse(text.toString());
        String content = out.content() == null ? "" : out.content();
        String sent = emitted.toString();
        String rest = content.startsWith(sent) ? content.substring(sent.length()) : content; // always the first
        return new End(rest, out);
    }

    /** The whole text so far, as the model wrote it. */
    public String text() {
        return text.toString();
    }
}
