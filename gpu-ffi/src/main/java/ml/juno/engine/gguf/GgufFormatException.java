package ml.juno.engine.gguf;

import java.io.IOException;

/**
 * A GGUF file that cannot be read as one: truncated, corrupted or hostile. The message names the field being read
 * and the byte offset (from the start of the file) where it went wrong.
 */
public class GgufFormatException extends IOException {

    private final String field;
    private final long offset;

    public GgufFormatException(String field, long offset, String problem) {
        super(field + " at byte offset " + offset + ": " + problem);
        this.field = field;
        this.offset = offset;
    }

    /** A value that parses but cannot be right (a key out of its sane range); no byte offset ({@link #offset()} is -1). */
    public GgufFormatException(String field, String problem) {
        super(field + ": " + problem);
        this.field = field;
        this.offset = -1;
    }

    /** The field being read, e.g. {@code tensor[3].offset} or {@code metadata[tokenizer.ggml.tokens].count}. */
    public String field() {
        return field;
    }

    /** Byte offset in the file of the field. */
    public long offset() {
        return offset;
    }
}
