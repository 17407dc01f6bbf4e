package ml.juno.engine.gguf;

import java.util.Arrays;
import java.util.Objects;

/** Equality and hashing of metadata values, some of which are primitive arrays. */
final class GgufValues {

    private GgufValues() {}

    static boolean deepEquals(Object a, Object b) {
        return Objects.deepEquals(a, b);
    }

    static int deepHash(Object v) {
        return Arrays.deepHashCode(new Object[] {v});
    }
}
