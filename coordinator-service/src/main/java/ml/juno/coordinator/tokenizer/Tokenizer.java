package ml.juno.coordinator.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.jfr.TokenizerEvent;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufMetadata;

/**
 * Text ⇄ token ids for one vocabulary, matching llama.cpp's {@code llama_tokenize} /
 * {@code llama_token_to_piece} token for token. Immutable and thread-safe; each call allocates its own
 * scratch space.
 *
 * <p>{@link #encode(String, boolean, boolean)} has llama.cpp's two switches: {@code addSpecial} adds
 * BOS/EOS as the model asks ({@code add_bos_token}/{@code add_eos_token}); {@code parseSpecial}
 * turns control-token text such as {@code <|im_end|>} into the token instead of spelling it out.
 */
public final class Tokenizer {
    /** Longest input accepted, in UTF-8 bytes; beyond this encode refuses with a clear error. */
    public static final int MAX_INPUT_BYTES = 64 << 20;

    private static final byte[] SPACE_ESCAPE = "\u2581".getBytes(StandardCharsets.UTF_8);

    private final Vocabulary vocab;
    private final TokenLookup lookup;
    private final TokenAttributes attributes;
    private final SpecialTokenSplitter splitter;
    private final SpmEncoder spm;
    private final BpeEncoder bpe;
    private final PreTokenizer pre;
    private final boolean cleanSpaces;
    private final byte[][] pieces; // token_to_piece with special = true

    private Tokenizer(Vocabulary vocab) {
        this.vocab = vocab;
        List<String> texts = new ArrayList<>(vocab.tokens().texts());
        for (int i = 0; i < texts.size(); i++) {
            if (texts.get(i).isEmpty()) {
                texts.set(i, "[EMPTY_" + i + "]"); // llama.cpp's placeholder for an empty token
            }
        }
        this.lookup = new TokenLookup(texts);
        this.attributes = new TokenAttributes(vocab, lookup);
        this.splitter = new SpecialTokenSplitter(attributes.specialCache, lookup, attributes.attrs);
        if (vocab.kind().model() == Vocabulary.Model.SPM) {
            this.spm = new SpmEncoder(lookup, texts, vocab.tokens().scores(), vocab.special().unk());
            this.bpe = null;
            this.pre = null;
            this.cleanSpaces = false;
        } else {
            this.pre = PreTokenizer.forName(vocab.kind().pre());
            this.bpe = new BpeEncoder(texts, vocab.merges(), ignoresMerges(vocab.kind().pre()));
            this.spm = null;
            this.cleanSpaces = cleansSpaces(vocab.kind().pre());
        }
        this.pieces = new byte[texts.size()][];
        for (int id = 0; id < pieces.length; id++) {
            pieces[id] = computePiece(id, texts.get(id));
        }
    }

    public static Tokenizer fromVocabulary(Vocabulary vocab) {
        return new Tokenizer(vocab);
    }

    /** The tokenizer of a model file (see {@link Vocabulary#fromGguf}). */
    public static Tokenizer fromGguf(GgufMetadata metadata) {
        return new Tokenizer(Vocabulary.fromGguf(metadata));
    }

    /** The tokenizer of an open model file (see {@link Vocabulary#fromGguf}). */
    public static Tokenizer fromGguf(GgufFile file) {
        return fromGguf(file.metadata());
    }

    private static boolean ignoresMerges(String pre) {
        return switch (pre) {
            case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                 "jina-v5-nano" -> true;
            default -> false;
        };
    }

    /** llama.cpp's {@code clean_spaces}: true for BPE vocabularies except the listed pre-tokenizers. */
    private static boolean cleansSpaces(String pre) {
        return switch (pre) {
            case "deepseek-llm", "deepseek-coder", "deepseek-v3", "command-r", "qwen2", "deepseek-r1-qwen",
                 "kormo", "f2llmv2", "poro-chat", "viking", "smollm", "chameleon", "gpt-4o", "llama4" -> false;
            default -> true;
        };
    }

    public Vocabulary vocabulary() {
        return vocab;
    }

    /** Number of tokens in the vocabulary. */
    public int size() {
        return pieces.length;
    }

    public int bos() {
        return vocab.special().bos();
    }

    public int eos() {
        return vocab.special().eos();
    }

    /** End-of-turn token: from metadata or detected by its text ({@code <|im_end|>}, {@code <|eot_id|>} …); -1 if none. */
    public int eot() {
        return attributes.eot;
    }

    public int unk() {
        return vocab.special().unk();
    }

    public boolean addsBos() {
        return vocab.flags().addBos();
    }

    public boolean addsEos() {
        return vocab.flags().addEos();
    }

    /** Whether generating this token ends generation (EOS, EOT, {@code <|im_end|>}, {@code <|end|>} …). */
    public boolean isEndOfGeneration(int id) {
        return attributes.isEog(id);
    }

    /** The end-of-generation token ids, ascending: the stop tokens of this vocabulary. */
    public int[] endOfGenerationIds() {
        return attributes.eog.clone();
    }

    /** Control or unknown tokens: not rendered unless special rendering is asked for. */
    public boolean isControl(int id) {
        return (attributes.attrs[checkId(id)] & (TokenAttributes.CONTROL | TokenAttributes.UNKNOWN)) != 0;
    }

    /** The token's text as stored in the vocabulary (e.g. {@code ▁Hello}, {@code ĠHello}, {@code <0x0A>}). */
    public String tokenText(int id) {
        return vocab.tokens().texts().get(checkId(id));
    }

    /** The id of the token whose stored text is exactly {@code text}, or -1. */
    public int tokenId(String text) {
        return lookup.find(text);
    }

    // ---- encode ----------------------------------------------------------------------------

    /** Encodes with BOS/EOS as the model asks and special-token text treated as plain text. */
    public int[] encode(String text) {
        return encode(text, true, false);
    }

    /**
     * Encodes text to token ids.
     *
     * @param addSpecial   add BOS (and EOS) when the model's {@code add_bos_token}/{@code add_eos_token} say so
     * @param parseSpecial recognise control-token text (e.g. {@code <|user|>}) as that token
     * @throws IllegalArgumentException when the text exceeds {@link #MAX_INPUT_BYTES}
     */
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        if (text == null) {
            throw new IllegalArgumentException("text must not be null");
        }
        if (text.length() > MAX_INPUT_BYTES) { // every char is at least one byte
            throw tooLong(text.length());
        }
        TokenizerEvent event = TokenizerEvent.startIfEnabled(); // null unless a JFR recording wants it
        byte[] utf8 = Utf8.encode(text);
        if (utf8.length > MAX_INPUT_BYTES) {
            throw tooLong(utf8.length);
        }
        IntList frags = splitter.split(utf8, parseSpecial);
        IntList out = new IntList(utf8.length / 3 + 4);
        if (spm != null) {
            encodeSpm(utf8, frags, addSpecial, out);
        } else {
            encodeBpe(utf8, frags, addSpecial, out);
        }
        TokenizerEvent.finish(event, utf8.length, out.size());
        return out.toArray();
    }

    private static IllegalArgumentException tooLong(long bytes) {
        return new IllegalArgumentException("input of at least " + bytes + " UTF-8 bytes exceeds the tokenizer limit of "
                + MAX_INPUT_BYTES + " bytes");
    }

    private void encodeSpm(byte[] utf8, IntList frags, boolean addSpecial, IntList out) {
        boolean prevSpecial = true; // the first fragment gets the space prefix
        if (addSpecial && vocab.flags().addBos()) {
            out.add(vocab.special().bos());
        }
        byte[] buf = null;
        for (int f = 0; f < frags.size(); f += 3) {
            int tok = frags.get(f);
            if (tok >= 0) {
                out.add(tok);
                prevSpecial = true;
                continue;
            }
            int start = frags.get(f + 1);
            int end = frags.get(f + 2);
            boolean prefix = vocab.flags().addSpacePrefix() && prevSpecial;
            int need = ((end - start) + 1) * SPACE_ESCAPE.length;
            if (buf == null || buf.length < need) {
                buf = new byte[need];
            }
            int n = 0;
            if (prefix) {
                System.arraycopy(SPACE_ESCAPE, 0, buf, 0, SPACE_ESCAPE.length);
                n = SPACE_ESCAPE.length;
            }
            for (int i = start; i < end; i++) {
                byte b = utf8[i];
                if (b == ' ') {
                    System.arraycopy(SPACE_ESCAPE, 0, buf, n, SPACE_ESCAPE.length);
                    n += SPACE_ESCAPE.length;
                } else {
                    buf[n++] = b;
                }
            }
            spm.encode(buf, n, out);
            prevSpecial = false;
        }
        if (addSpecial && vocab.flags().addEos()) {
            out.add(vocab.special().eos());
        }
    }

    private void encodeBpe(byte[] utf8, IntList frags, boolean addSpecial, IntList out) {
        if (addSpecial && vocab.flags().addBos()) {
            out.add(vocab.special().bos());
        }
        BpeEncoder.Session session = new BpeEncoder.Session();
        int[] cps = null;
        int[] byteStart = null;
        for (int f = 0; f < frags.size(); f += 3) {
            int tok = frags.get(f);
            if (tok >= 0) {
                out.add(tok);
                continue;
            }
            int start = frags.get(f + 1);
            int len = frags.get(f + 2) - start;
            if (cps == null || cps.length < len) {
                cps = new int[len];
                byteStart = new int[len + 1];
            }
            int n = Utf8.codePoints(utf8, start, len, cps, byteStart);
            IntList words = pre.split(cps, n);
            int cp = 0;
            for (int w = 0; w < words.size(); w++) {
                int wl = words.get(w);
                int b0 = byteStart[cp];
                int b1 = byteStart[cp + wl];
                bpe.encodeWord(session, utf8, start + b0, b1 - b0, out);
                cp += wl;
            }
        }
        if (addSpecial && vocab.flags().addEos()) {
            out.add(vocab.special().eos());
        }
    }

    // ---- decode ----------------------------------------------------------------------------

    private byte[] computePiece(int id, String text) {
        int attr = attributes.attrs[id];
        if ((attr & (TokenAttributes.UNKNOWN | TokenAttributes.CONTROL | TokenAttributes.USER_DEFINED)) != 0) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        if ((attr & TokenAttributes.NORMAL) != 0) {
            if (spm != null) {
                return text.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8);
            }
            return byteLevelDecode(text);
        }
        if ((attr & TokenAttributes.BYTE) != 0) {
            return new byte[] {(byte) parseByteToken(text)};
        }
        return new byte[0];
    }

    private static int parseByteToken(String text) {
        if (text.length() != 6 || !text.startsWith("<0x") || text.charAt(5) != '>') {
            throw new IllegalArgumentException("byte token with malformed text '" + text + "'");
        }
        return Integer.parseInt(text.substring(3, 5), 16);
    }

    /** GPT-2 byte-level text back to bytes; characters outside the mapping are kept, marked, as llama.cpp does. */
    private static byte[] byteLevelDecode(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(text.length());
        text.codePoints().forEach(cp -> {
            int b = ByteLevel.decode(cp);
            if (b >= 0) {
                out.write(b);
            } else {
                StringBuilder sb = new StringBuilder("[UNK_BYTE_0x");
                for (byte u : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
                    sb.append(String.format("%02x", u & 0xFF));
                }
                sb.append(text).append(']');
                out.writeBytes(sb.toString().getBytes(StandardCharsets.UTF_8));
            }
        });
        return out.toByteArray();
    }

    private int checkId(int id) {
        if (id < 0 || id >= pieces.length) {
            throw new IllegalArgumentException("token id " + id + " outside vocabulary of " + pieces.length);
        }
        return id;
    }

    /**
     * The bytes a token stands for (llama.cpp's {@code token_to_piece}). Control and unknown tokens give
     * no bytes unless {@code renderSpecial}. May be part of a UTF-8 character (byte tokens).
     */
    public byte[] pieceBytes(int id, boolean renderSpecial) {
        checkId(id);
        if (!renderSpecial && isControl(id)) {
            return new byte[0];
        }
        return pieces[id].clone();
    }

    /** Writes the token's bytes into {@code out}; returns how many. Allocation-free. */
    int appendPiece(int id, boolean renderSpecial, ByteArrayOutputStream out) {
        checkId(id);
        if (!renderSpecial && isControl(id)) {
            return 0;
        }
        byte[] p = pieces[id];
        out.write(p, 0, p.length);
        return p.length;
    }

    /** The token as text, special tokens rendered (what {@code llama-tokenize} prints). */
    public String piece(int id) {
        return new String(pieces[checkId(id)], StandardCharsets.UTF_8);
    }

    /** Decodes ids back to text, without special tokens; inverse of {@link #encode(String, boolean, boolean)}. */
    public String decode(int[] ids) {
        return decode(ids, false);
    }

    /**
     * Decodes ids to text. With a SentencePiece vocabulary that prepends a space, the space in front of
     * the first rendered piece is removed, so {@code decode(encode(s)) == s}.
     */
    public String decode(int[] ids, boolean renderSpecial) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(ids.length * 4);
        boolean stripSpace = spm != null && vocab.flags().addSpacePrefix();
        for (int i = 0; i < ids.length; i++) {
            int id = checkId(ids[i]);
            if (!renderSpecial && isControl(id)) {
                continue;
            }
            byte[] p = pieces[id];
            int skip = stripSpace && p.length > 0 && p[0] == ' ' ? 1 : 0;
            out.write(p, skip, p.length - skip);
            if (p.length > 0) {
                stripSpace = false;
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * llama.cpp's {@code llama_detokenize}: optional removal of the leading BOS / trailing EOS, control
     * tokens rendered when {@code unparseSpecial}, and the BPE "clean spaces" pass (" ," → ",", …).
     */
    public String detokenize(int[] ids, boolean removeSpecial, boolean unparseSpecial) {
        int from = 0;
        int to = ids.length;
        boolean removeSpace = spm != null && vocab.flags().addSpacePrefix();
        if (removeSpecial && vocab.flags().addBos() && to > 0 && ids[0] == vocab.special().bos()) {
            removeSpace = false;
            from = 1;
        }
        if (removeSpecial && vocab.flags().addEos() && to > from && ids[to - 1] == vocab.special().eos()) {
            to--;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = from; i < to; i++) {
            int id = checkId(ids[i]);
            if (!unparseSpecial && isControl(id)) {
                removeSpace = false;
                continue;
            }
            byte[] p = pieces[id];
            int skip = removeSpace && p.length > 0 && p[0] == ' ' ? 1 : 0;
            out.write(p, skip, p.length - skip);
            removeSpace = false;
        }
        byte[] t = out.toByteArray();
        int n = t.length;
        if (cleanSpaces) {
            n = cleanSpaces(t, n);
        }
        return new String(t, 0, n, StandardCharsets.UTF_8);
    }

    /** The three clean-up passes of llama.cpp's detokenizer; returns the new length. */
    private static int cleanSpaces(byte[] t, int total) {
        // " ?", " !", " .", " ,"
        int n = total == 0 ? 0 : 1;
        for (int i = 1; i < total; i++) {
            byte x = t[i];
            if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) {
                n--;
            }
            t[n++] = x;
        }
        // " ' " → "'"
        int total2 = n;
        n = total2 == 0 ? 0 : 1;
        for (int i = 1; i < total2; i++) {
            byte x = t[i];
            if (x == '\'' && i + 1 < total2 && t[i - 1] == ' ' && t[i + 1] == ' ') {
                n--;
                t[++i] = 0;
            }
            t[n++] = x;
        }
        // " 's", " 'm", " 're", " 've"
        int total3 = n;
        n = total3 == 0 ? 0 : 1;
        for (int i = 1; i < total3; i++) {
            byte x = t[i];
            if (t[i - 1] == ' ' && x == '\'' && i + 1 < total3) {
                byte x1 = t[i + 1];
                if (x1 == 's' || x1 == 'm') {
                    n--;
                } else if (i + 2 < total3) {
                    byte x2 = t[i + 2];
                    if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) {
                        n--;
                    }
                }
            }
            t[n++] = x;
        }
        return n;
    }

    /** A detokenizer for one generated sequence; see {@link StreamingDetokenizer}. */
    public StreamingDetokenizer streamingDetokenizer(boolean renderSpecial) {
        return new StreamingDetokenizer(this, renderSpecial);
    }
}
