package ml.juno.coordinator.kvcache;

/**
 * Hash chain over full blocks: {@code h(block i) = H(h(block i-1), tokens of block i)}, so equal
 * hashes mean equal whole prefixes (up to 64-bit collisions, which the manager also rules out by
 * comparing the stored tokens).
 */
final class PrefixHash {
    /** Parent hash of the first block. */
    static final long ROOT = 0x6A09E667F3BCC908L;

    private PrefixHash() {
    }

    /**
     * The parent hash of the first block of a sequence computed with named LoRA adapter {@code adapter}: {@link #ROOT}
     * for none, a different chain for each adapter, so the same tokens under another adapter never share KV blocks.
     */
    static long root(int adapter) {
        return adapter == 0 ? ROOT : fmix(ROOT ^ (adapter * 0x9E3779B97F4A7C15L));
    }

    static long of(long parent, int[] tokens, int from, int len) {
        long h = fmix(parent ^ 0x9E3779B97F4A7C15L);
        for (int i = 0; i < len; i++) {
            h = fmix(h ^ (tokens[from + i] & 0xFFFFFFFFL) * 0xC2B2AE3D27D4EB4FL) + i;
        }
        return fmix(h ^ len);
    }

    /** MurmurHash3's 64-bit finaliser. */
    private static long fmix(long k) {
        k ^= k >>> 33;
        k *= 0xFF51AFD7ED558CCDL;
        k ^= k >>> 33;
        k *= 0xC4CEB9FE1A85EC53L;
        k ^= k >>> 33;
        return k;
    }
}
