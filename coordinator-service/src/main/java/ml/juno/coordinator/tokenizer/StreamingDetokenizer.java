package ml.juno.coordinator.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Turns a stream of generated token ids into text deltas that never split a character: bytes of a
 * UTF-8 sequence that is still incomplete (a byte token, or a BPE token ending mid-character) are held
 * back until the rest arrives. Valid text therefore streams without U+FFFD; bytes that can never form
 * a character are emitted as U+FFFD rather than held forever. One instance per sequence; not
 * thread-safe.
 */
public final class StreamingDetokenizer {
    private final Tokenizer tokenizer;
    private final boolean renderSpecial;
    private final ByteArrayOutputStream scratch = new ByteArrayOutputStream(64);
    private byte[] pending = new byte[16];
    private int pendingLen;

    StreamingDetokenizer(Tokenizer tokenizer, boolean renderSpecial) {
        this.tokenizer = tokenizer;
        this.renderSpecial = renderSpecial;
    }

    /** Adds one token; returns the text that became complete (possibly empty). */
    public String decode(int tokenId) {
        scratch.reset();
        tokenizer.appendPiece(tokenId, renderSpecial, scratch);
        byte[] piece = scratch.toByteArray();
        if (pendingLen + piece.length > pending.length) {
            pending = Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLen + piece.length));
        }
        System.arraycopy(piece, 0, pending, pendingLen, piece.length);
        pendingLen += piece.length;
        int complete = Utf8.completePrefix(pending, pendingLen);
        if (complete == 0) {
            return "";
        }
        String text = new String(pending, 0, complete, StandardCharsets.UTF_8);
        System.arraycopy(pending, complete, pending, 0, pendingLen - complete);
        pendingLen -= complete;
        return text;
    }

    /** Number of bytes held back waiting for the rest of a character. */
    public int pendingBytes() {
        return pendingLen;
    }

    /** Ends the sequence: returns whatever is held back (an incomplete character becomes U+FFFD). */
    public String flush() {
        String text = new String(pending, 0, pendingLen, StandardCharsets.UTF_8);
        pendingLen = 0;
        return text;
    }
}
