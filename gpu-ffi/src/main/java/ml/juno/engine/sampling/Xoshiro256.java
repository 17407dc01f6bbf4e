package ml.juno.engine.sampling;

/**
 * xoshiro256** (Blackman and Vigna), seeded through SplitMix64. Written out here rather than taken
 * from {@code java.util.random} so a seed gives the same stream on every JDK. One instance per
 * sequence; not thread-safe.
 */
public final class Xoshiro256 {
    private long s0;
    private long s1;
    private long s2;
    private long s3;

    public Xoshiro256(long seed) {
        long z = seed;
        z += 0x9E3779B97F4A7C15L;
        s0 = mix(z);
        z += 0x9E3779B97F4A7C15L;
        s1 = mix(z);
        z += 0x9E3779B97F4A7C15L;
        s2 = mix(z);
        z += 0x9E3779B97F4A7C15L;
        s3 = mix(z);
    }

    /** A generator in the state {@link #state(long[])} wrote (four words, not all zero). */
    public Xoshiro256(long[] state) {
        if (state.length != 4 || (state[0] | state[1] | state[2] | state[3]) == 0) {
            throw new IllegalArgumentException("a xoshiro256** state is four words, not all zero");
        }
        s0 = state[0];
        s1 = state[1];
        s2 = state[2];
        s3 = state[3];
    }

    /** Writes the generator's state into {@code out[0..4)}: a generator made from it continues this one's stream. */
    public void state(long[] out) {
        out[0] = s0;
        out[1] = s1;
        out[2] = s2;
        out[3] = s3;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    public long nextLong() {
        long result = Long.rotateLeft(s1 * 5, 7) * 9;
        long t = s1 << 17;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = Long.rotateLeft(s3, 45);
        return result;
    }

    /** Uniform in [0, 1), 53 random bits. */
    public double nextDouble() {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }
}
