package ml.juno.coordinator.tokenizer;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Splits text into words before byte-level BPE, as chosen by {@code tokenizer.ggml.pre}. A splitter is a
 * list of steps applied in turn: each step cuts every current piece into its matches and the gaps
 * between them (llama.cpp's {@code unicode_regex_split}). The GPT-2 and Llama-3 expressions run as
 * hand-written scanners; the others run as {@link java.util.regex} patterns over a "collapsed" text in
 * which every non-ASCII code point is replaced by one marker character per category, exactly as
 * llama.cpp does before handing them to {@code std::regex}.
 */
final class PreTokenizer {
    /** GPT-2's expression; recognised and run by {@link #gpt2}. */
    static final String GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
    /** Llama 3's expression (case-insensitive contractions spelled out); run by {@link #llama3}. */
    static final String LLAMA3 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
            + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static final String QWEN2 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
            + "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    private final String name;
    private final List<String> expressions;
    private final Pattern[] patterns; // null entry = custom scanner
    private final boolean[] collapsed;

    private PreTokenizer(String name, List<String> expressions) {
        this.name = name;
        this.expressions = List.copyOf(expressions);
        this.patterns = new Pattern[expressions.size()];
        this.collapsed = new boolean[expressions.size()];
        for (int i = 0; i < patterns.length; i++) {
            String e = expressions.get(i);
            if (e.equals(GPT2) || e.equals(LLAMA3)) {
                continue;
            }
            collapsed[i] = usesCategories(e);
            patterns[i] = Pattern.compile(collapsed[i] ? collapse(e) : e);
        }
    }

    String name() {
        return name;
    }

    List<String> expressions() {
        return expressions;
    }

    /**
     * The pre-tokenizer for a {@code tokenizer.ggml.pre} value (llama.cpp's names and aliases).
     *
     * @throws IllegalArgumentException for a value this tokenizer does not know; guessing would
     *     silently produce different token ids than the model was trained with.
     */
    static PreTokenizer forName(String pre) {
        String p = pre == null || pre.isEmpty() ? "default" : pre;
        List<String> e = switch (p) {
            case "default" -> List.of("[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2, "\\p{N}+", "[0-9][0-9][0-9]");
            case "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
                 "mellum", "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4",
                 "jina-v1-en", "jina-v2-code", "roberta-bpe" -> List.of(GPT2);
            case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                 "jina-v5-nano", "dbrx", "smaug-bpe", "glm4", "chatglm-bpe" -> List.of(LLAMA3);
            case "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "hunyuan", "megrez",
                 "solar-open" -> List.of(QWEN2);
            // ranges written as escapes: pasted literally, several (U+1FD3, U+2126, U+212A …) would be
            // normalised into other code points and change the class
            case "deepseek-llm" -> List.of(
                    "[\r\n]",
                    "\\s?[A-Za-z\\x{00B5}\\x{00C0}-\\x{00D6}\\x{00D8}-\\x{00F6}\\x{00F8}-\\x{01BA}\\x{01BC}-\\x{01BF}"
                    + "\\x{01C4}-\\x{0293}\\x{0295}-\\x{02AF}\\x{0370}-\\x{0373}\\x{0376}-\\x{0377}\\x{037B}-\\x{037D}"
                    + "\\x{037F}\\x{0386}\\x{0388}-\\x{038A}\\x{038C}\\x{038E}-\\x{03A1}\\x{03A3}-\\x{03F5}"
                    + "\\x{03F7}-\\x{0481}\\x{048A}-\\x{052F}\\x{0531}-\\x{0556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"
                    + "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}"
                    + "\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}"
                    + "\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}"
                    + "\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}"
                    + "\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"
                    + "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"
                    + "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}-\\x{2184}"
                    + "\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}-\\x{2CF3}\\x{A640}-\\x{A66D}"
                    + "\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}"
                    + "\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}"
                    + "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}"
                    + "\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",
                    "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
                    "\\s+$",
                    "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+",
                    "\\p{N}+");
            case "deepseek-coder" -> List.of("[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
                    "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}");
            case "falcon" -> List.of("[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2, "[0-9][0-9][0-9]");
            case "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2" ->
                    List.of("\\p{N}", GPT2);
            default -> throw new IllegalArgumentException("unsupported pre-tokenizer tokenizer.ggml.pre='"
                    + pre + "'; refusing to guess (known: default, gpt-2, llama-bpe, qwen2, deepseek-llm, "
                    + "deepseek-coder, falcon, starcoder and their llama.cpp aliases)");
        };
        return new PreTokenizer(p.toLowerCase(Locale.ROOT), e);
    }

    /**
     * Splits {@code cps[0, n)} into words. Returns the word lengths in code points, in order; they sum
     * to {@code n}.
     */
    IntList split(int[] cps, int n) {
        IntList offsets = new IntList(16);
        offsets.add(n);
        String plain = null;
        String collapsedText = null;
        int[] charToCp = null;
        for (int i = 0; i < patterns.length; i++) {
            String e = expressions.get(i);
            if (e.equals(GPT2)) {
                offsets = gpt2(cps, offsets);
            } else if (e.equals(LLAMA3)) {
                offsets = llama3(cps, offsets);
            } else if (collapsed[i]) {
                if (collapsedText == null) {
                    collapsedText = collapsedText(cps, n);
                }
                offsets = regex(patterns[i], collapsedText, null, offsets);
            } else {
                if (plain == null) {
                    StringBuilder sb = new StringBuilder(n + 16);
                    charToCp = new int[2 * n + 1];
                    for (int k = 0; k < n; k++) {
                        int cp = cps[k];
                        if (cp > 0x7F && UnicodeFlags.isWhitespace(cp)) {
                            cp = 0x0B; // std::wregex's \s does not know non-ASCII spaces; llama.cpp maps them
                        }
                        charToCp[sb.length()] = k;
                        sb.appendCodePoint(cp);
                        if (Character.charCount(cp) == 2) {
                            charToCp[sb.length() - 1] = k;
                        }
                    }
                    charToCp[sb.length()] = n;
                    plain = sb.toString();
                }
                offsets = regex(patterns[i], plain, charToCp, offsets);
            }
        }
        return offsets;
    }

    // ---- regex steps -------------------------------------------------------------------------

    private static boolean usesCategories(String e) {
        for (String c : new String[] {"\\p{N}", "\\p{L}", "\\p{P}", "\\p{M}", "\\p{S}", "\\p{Lu}", "\\p{Ll}",
                "\\p{Lt}", "\\p{Lm}", "\\p{Lo}"}) {
            if (e.contains(c)) {
                return true;
            }
        }
        return false;
    }

    // collapsed markers (llama.cpp k_ucat_cpt) and the ASCII members of each category (k_ucat_map)
    private static final char MARK_OTHER = '\u00D0';

    private static char marker(int category) {
        return switch (category) {
            case UnicodeFlags.NUMBER -> '\u00D1';
            case UnicodeFlags.LETTER -> '\u00D2';
            case UnicodeFlags.PUNCTUATION -> '\u00D3';
            case UnicodeFlags.ACCENT_MARK -> '\u00D4';
            case UnicodeFlags.SYMBOL -> '\u00D5';
            default -> MARK_OTHER;
        };
    }

    private static String asciiMembers(int category) {
        return switch (category) {
            case UnicodeFlags.NUMBER -> "0-9";
            case UnicodeFlags.LETTER -> "A-Za-z";
            case UnicodeFlags.PUNCTUATION -> "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}";
            case UnicodeFlags.ACCENT_MARK -> "";
            case UnicodeFlags.SYMBOL -> "\\$\\+<->\\^`\\|";
            default -> throw new IllegalStateException();
        };
    }

    private static String collapsedText(int[] cps, int n) {
        char[] out = new char[n];
        for (int i = 0; i < n; i++) {
            int cp = cps[i];
            if (cp < 128) {
                out[i] = (char) cp;
                continue;
            }
            int f = UnicodeFlags.of(cp);
            out[i] = UnicodeFlags.isSpace(f) ? '\u000B' : marker(f & UnicodeFlags.CATEGORY_MASK);
        }
        return new String(out);
    }

    /** Rewrites \p{X} as a class of its marker plus its ASCII members (llama.cpp's regex collapse). */
    static String collapse(String e) {
        StringBuilder sb = new StringBuilder();
        boolean inside = false;
        for (int i = 0; i < e.length(); i++) {
            char c = e.charAt(i);
            if (c == '[' && (i == 0 || e.charAt(i - 1) != '\\')) {
                sb.append('[');
                inside = true;
                continue;
            }
            if (inside && c == ']' && e.charAt(i - 1) != '\\') {
                sb.append(']');
                inside = false;
                continue;
            }
            if (c == '\\' && i + 3 < e.length() && e.charAt(i + 1) == 'p' && e.charAt(i + 2) == '{') {
                int close = e.indexOf('}', i + 3);
                if (close > 0) {
                    int category = switch (e.substring(i + 3, close)) {
                        case "N" -> UnicodeFlags.NUMBER;
                        case "L", "Lu", "Ll", "Lt", "Lm", "Lo" -> UnicodeFlags.LETTER;
                        case "P" -> UnicodeFlags.PUNCTUATION;
                        case "M" -> UnicodeFlags.ACCENT_MARK;
                        case "S" -> UnicodeFlags.SYMBOL;
                        default -> 0;
                    };
                    if (category != 0) {
                        if (!inside) {
                            sb.append('[');
                        }
                        sb.append(marker(category)).append(asciiMembers(category));
                        if (!inside) {
                            sb.append(']');
                        }
                        i = close;
                        continue;
                    }
                }
            }
            sb.append(c);
        }
        return sb.toString();
    }

    /**
     * One regex step over every current piece. {@code charToCp} maps char indexes of {@code text} to
     * code-point indexes (null when the text has one char per code point).
     */
    private static IntList regex(Pattern p, String text, int[] charToCp, IntList offsets) {
        IntList out = new IntList(offsets.size() * 2);
        Matcher m = p.matcher(text);
        int startCp = 0;
        int startChar = 0;
        for (int k = 0; k < offsets.size(); k++) {
            int len = offsets.get(k);
            int endCp = startCp + len;
            int endChar = charToCp == null ? endCp : charIndex(charToCp, startChar, endCp);
            m.region(startChar, endChar);
            int prev = startCp;
            while (m.find()) {
                int ms = cp(charToCp, m.start());
                int me = cp(charToCp, m.end());
                if (ms > prev) {
                    out.add(ms - prev);
                }
                out.add(me - ms);
                prev = me;
            }
            if (prev < endCp) {
                out.add(endCp - prev);
            }
            startCp = endCp;
            startChar = endChar;
        }
        return out;
    }

    private static int cp(int[] charToCp, int charIndex) {
        return charToCp == null ? charIndex : charToCp[charIndex];
    }

    private static int charIndex(int[] charToCp, int fromChar, int cpIndex) {
        int c = fromChar;
        while (charToCp[c] < cpIndex) {
            c++;
        }
        // skip the low half of a surrogate pair that belongs to the previous code point
        return c;
    }

    // ---- hand-written scanners -----------------------------------------------------------------

    private static int flagsAt(int[] cps, int pos, int end) {
        return pos < end ? UnicodeFlags.of(cps[pos]) : UnicodeFlags.NONE;
    }

    private static int cpAt(int[] cps, int pos, int end) {
        return pos < end ? cps[pos] : -1;
    }

    /** Scans 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ . */
    private static IntList gpt2(int[] cps, IntList offsets) {
        IntList out = new IntList(offsets.size() * 8);
        int start = 0;
        for (int k = 0; k < offsets.size(); k++) {
            final int ini = start;
            final int end = start + offsets.get(k);
            start = end;
            int prevEnd = ini;
            int pos = ini;
            while (pos < end) {
                int cp = cps[pos];
                int f = UnicodeFlags.of(cp);
                if (cp == '\'' && pos + 1 < end) {
                    int n1 = cps[pos + 1];
                    if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
                        pos += 2;
                        prevEnd = emit(out, prevEnd, pos);
                        continue;
                    }
                    if (pos + 2 < end) {
                        int n2 = cps[pos + 2];
                        if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) {
                            pos += 3;
                            prevEnd = emit(out, prevEnd, pos);
                            continue;
                        }
                    }
                }
                int f2 = cp == ' ' ? flagsAt(cps, pos + 1, end) : f;
                if (UnicodeFlags.isLetter(f2)) {
                    pos += cp == ' ' ? 1 : 0;
                    while (UnicodeFlags.isLetter(f2)) {
                        f2 = flagsAt(cps, ++pos, end);
                    }
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                if (UnicodeFlags.isNumber(f2)) {
                    pos += cp == ' ' ? 1 : 0;
                    while (UnicodeFlags.isNumber(f2)) {
                        f2 = flagsAt(cps, ++pos, end);
                    }
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                if (isOther(f2)) {
                    pos += cp == ' ' ? 1 : 0;
                    while (isOther(f2)) {
                        f2 = flagsAt(cps, ++pos, end);
                    }
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                int spaces = 0;
                while (UnicodeFlags.isSpace(flagsAt(cps, pos + spaces, end))) {
                    spaces++;
                }
                if (spaces > 1 && pos + spaces < end) { // \s+(?!\S): leave the last space to the next word
                    pos += spaces - 1;
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                if (spaces > 0) {
                    pos += spaces;
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                prevEnd = emit(out, prevEnd, ++pos);
            }
        }
        return out;
    }

    /** [^\s\p{L}\p{N}] for a position inside the text (NONE marks the end). */
    private static boolean isOther(int f) {
        return f != UnicodeFlags.NONE
                && (f & (UnicodeFlags.WHITESPACE | UnicodeFlags.LETTER | UnicodeFlags.NUMBER)) == 0;
    }

    /** Scans Llama 3's expression (see {@link #LLAMA3}). */
    private static IntList llama3(int[] cps, IntList offsets) {
        IntList out = new IntList(offsets.size() * 8);
        int start = 0;
        for (int k = 0; k < offsets.size(); k++) {
            final int ini = start;
            final int end = start + offsets.get(k);
            start = end;
            int prevEnd = ini;
            int pos = ini;
            while (pos < end) {
                int cp = cps[pos];
                int f = UnicodeFlags.of(cp);
                if (cp == '\'' && pos + 1 < end) {
                    int n1 = UnicodeFlags.toLower(cps[pos + 1]);
                    if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
                        pos += 2;
                        prevEnd = emit(out, prevEnd, pos);
                        continue;
                    }
                    if (pos + 2 < end) {
                        int n2 = UnicodeFlags.toLower(cps[pos + 2]);
                        if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) {
                            pos += 3;
                            prevEnd = emit(out, prevEnd, pos);
                            continue;
                        }
                    }
                }
                // [^\r\n\p{L}\p{N}]?\p{L}+
                if (!(cp == '\r' || cp == '\n' || UnicodeFlags.isNumber(f))) {
                    if (UnicodeFlags.isLetter(f) || UnicodeFlags.isLetter(flagsAt(cps, pos + 1, end))) {
                        pos++;
                        while (UnicodeFlags.isLetter(flagsAt(cps, pos, end))) {
                            pos++;
                        }
                        prevEnd = emit(out, prevEnd, pos);
                        continue;
                    }
                }
                // \p{N}{1,3}
                if (UnicodeFlags.isNumber(f)) {
                    int first = pos;
                    while (UnicodeFlags.isNumber(flagsAt(cps, pos, end))) {
                        if (++pos - first >= 3) {
                            prevEnd = emit(out, prevEnd, pos);
                            first = pos;
                        }
                    }
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                // " ?[^\s\p{L}\p{N}]+[\r\n]*"
                int f2 = cp == ' ' ? flagsAt(cps, pos + 1, end) : f;
                if (isOther(f2)) {
                    pos += cp == ' ' ? 1 : 0;
                    while (isOther(f2)) {
                        f2 = flagsAt(cps, ++pos, end);
                    }
                    int c2 = cpAt(cps, pos, end);
                    while (c2 == '\r' || c2 == '\n') {
                        c2 = cpAt(cps, ++pos, end);
                    }
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                int spaces = 0;
                int lastNewlineEnd = 0;
                while (UnicodeFlags.isSpace(flagsAt(cps, pos + spaces, end))) {
                    int c2 = cps[pos + spaces];
                    if (c2 == '\r' || c2 == '\n') {
                        lastNewlineEnd = pos + spaces + 1;
                    }
                    spaces++;
                }
                if (lastNewlineEnd > 0) { // \s*[\r\n]+
                    pos = lastNewlineEnd;
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                if (spaces > 1 && pos + spaces < end) { // \s+(?!\S)
                    pos += spaces - 1;
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                if (spaces > 0) {
                    pos += spaces;
                    prevEnd = emit(out, prevEnd, pos);
                    continue;
                }
                prevEnd = emit(out, prevEnd, ++pos);
            }
        }
        return out;
    }

    /** Records the word ending at {@code end} (if not empty) and returns the new word start. */
    private static int emit(IntList out, int prevEnd, int end) {
        if (end > prevEnd) {
            out.add(end - prevEnd);
        }
        return end;
    }
}
