package ml.juno.coordinator.api.dto;

import java.util.concurrent.ThreadLocalRandom;

/** Response ids as OpenAI spells them: {@code chatcmpl-…} and {@code cmpl-…} with 24 random characters. */
public final class ResponseIds {

    private static final char[] ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

    private ResponseIds() {
    }

    public static String chat() {
        return "chatcmpl-" + random(24);
    }

    public static String completion() {
        return "cmpl-" + random(24);
    }

    private static String random(int n) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = ALPHABET[r.nextInt(ALPHABET.length)];
        }
        return new String(c);
    }
}
