package ml.juno.coordinator.tokenizer;

/**
 * Per-code-point category flags as llama.cpp's {@code unicode_cpt_flags} defines them: one general
 * category bit (\p{N}, \p{L}, \p{Z}, \p{M}, \p{P}, \p{S}, \p{C} or undefined) plus the White_Space
 * property. Categories come from the JDK's Unicode tables.
 */
final class UnicodeFlags {
    static final int UNDEFINED = 0x0001;
    static final int NUMBER = 0x0002;
    static final int LETTER = 0x0004;
    static final int SEPARATOR = 0x0008;
    static final int ACCENT_MARK = 0x0010;
    static final int PUNCTUATION = 0x0020;
    static final int SYMBOL = 0x0040;
    static final int CONTROL = 0x0080;
    static final int CATEGORY_MASK = 0x00FF;
    static final int WHITESPACE = 0x0100;

    /** Flags of a position outside the text: no bit set (llama.cpp's empty flags). */
    static final int NONE = 0;

    private UnicodeFlags() {
    }

    static int of(int cp) {
        if (cp < 0 || cp > Character.MAX_CODE_POINT) {
            return UNDEFINED;
        }
        int category = switch (Character.getType(cp)) {
            case Character.UPPERCASE_LETTER, Character.LOWERCASE_LETTER, Character.TITLECASE_LETTER,
                 Character.MODIFIER_LETTER, Character.OTHER_LETTER -> LETTER;
            case Character.DECIMAL_DIGIT_NUMBER, Character.LETTER_NUMBER, Character.OTHER_NUMBER -> NUMBER;
            case Character.NON_SPACING_MARK, Character.ENCLOSING_MARK, Character.COMBINING_SPACING_MARK -> ACCENT_MARK;
            case Character.CONNECTOR_PUNCTUATION, Character.DASH_PUNCTUATION, Character.START_PUNCTUATION,
                 Character.END_PUNCTUATION, Character.INITIAL_QUOTE_PUNCTUATION, Character.FINAL_QUOTE_PUNCTUATION,
                 Character.OTHER_PUNCTUATION -> PUNCTUATION;
            case Character.MATH_SYMBOL, Character.CURRENCY_SYMBOL, Character.MODIFIER_SYMBOL,
                 Character.OTHER_SYMBOL -> SYMBOL;
            case Character.SPACE_SEPARATOR, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR -> SEPARATOR;
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE -> CONTROL;
            default -> UNDEFINED;
        };
        return isWhitespace(cp) ? category | WHITESPACE : category;
    }

    /** The Unicode White_Space property (PropList.txt), which is what llama.cpp uses for \s. */
    static boolean isWhitespace(int cp) {
        return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680
                || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F
                || cp == 0x205F || cp == 0x3000;
    }

    static boolean isLetter(int flags) {
        return (flags & LETTER) != 0;
    }

    static boolean isNumber(int flags) {
        return (flags & NUMBER) != 0;
    }

    static boolean isSpace(int flags) {
        return (flags & WHITESPACE) != 0;
    }

    static int toLower(int cp) {
        return Character.toLowerCase(cp);
    }
}
