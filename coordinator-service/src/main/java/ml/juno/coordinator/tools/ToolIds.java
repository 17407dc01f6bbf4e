package ml.juno.coordinator.tools;

import java.util.concurrent.ThreadLocalRandom;

/** Call ids as OpenAI spells them: {@code call_} and 24 random letters and digits. */
public final class ToolIds {
    private static final char[] ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

    private ToolIds() {
    }

    public static String next() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        char[] c = new char[24];
        for (int i = 0; i < c.length; i++) {
            c[i] = ALPHABET[r.nextInt(ALPHABET.length)];
        }
        return "call_" + new String(c);
    }
}
