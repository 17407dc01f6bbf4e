package ml.juno.engine.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Objects;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Off-heap keys and values, F32 or F16, in one of two layouts. <b>Flat</b>: {@code [layer][slot][position][kvDim]},
 * every slot owns {@code contextLength} positions. <b>Paged</b> ({@link KvPaging}): {@code [layer][block][offset][kvDim]},
 * a pool of fixed-size blocks; slot {@code s} finds position {@code p} in block {@code table[s][p / blockSize]} at
 * offset {@code p % blockSize}, with the table set by {@link #setBlockTable} before a step. Several slots may list the
 * same block (a shared prefix). All access goes through this class (store a row, dot a query with a key, accumulate a
 * weighted value), so the kernels do not know which layout is in use.
 */
public final class KvCache implements AutoCloseable {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @SuppressWarnings("unchecked")
    private static final VectorShuffle<Float>[] ROTATE = new VectorShuffle[F.length()];

    static {
        for (int h = 1; h < F.length(); h <<= 1) {
            int hh = h;
            ROTATE[h] = VectorShuffle.fromOp(F, i -> (i + hh) & (F.length() - 1));
        }
    }

    private final KvLayout layout;
    private final Arena arena;
    private final MemorySegment[] keys;
    private final MemorySegment[] values;
    private final boolean f16;
    private final int kvDim;
    private final long slotStride;
    private final KvPaging paging;    // null: flat layout
    private final int blockSize;      // paged only
    private final int[][] tables;     // paged only: [slot][logical block] → physical block
    private final int[] tableLengths; // paged only: [slot] valid entries of tables[slot]

    /** Flat layout: {@code layout.slots()} slots of {@code layout.contextLength()} positions each. */
    public KvCache(KvLayout layout) {
        this(layout, null, layout.layerBytes());
    }

    /**
     * Paged layout: a pool of {@code paging.numBlocks()} blocks; {@code layout.slots()} slots of up to
     * {@code layout.contextLength()} positions each reach it through their block tables (all empty at first).
     */
    public KvCache(KvLayout layout, KvPaging paging) {
        this(layout, Objects.requireNonNull(paging, "paging"),
                paging.capacityPositions() * layout.kvDim() * layout.type().bytes);
    }

    private KvCache(KvLayout layout, KvPaging paging, long layerBytes) {
        this.layout = layout;
        this.paging = paging;
        this.arena = Arena.ofShared();
        this.keys = new MemorySegment[layout.layers()];
        this.values = new MemorySegment[layout.layers()];
        try {
            for (int l = 0; l < layout.layers(); l++) {
                keys[l] = arena.allocate(layerBytes, 64);
                values[l] = arena.allocate(layerBytes, 64);
            }
        } catch (RuntimeException | OutOfMemoryError e) {
            arena.close();
            throw e;
        }
        this.f16 = layout.type() == KvType.F16;
        this.kvDim = layout.kvDim();
        this.slotStride = (long) layout.contextLength() * kvDim;
        if (paging != null) {
            this.blockSize = paging.blockSize();
            this.tables = new int[layout.slots()][paging.blocksFor(layout.contextLength())];
            this.tableLengths = new int[layout.slots()];
        } else {
            this.blockSize = 0;
            this.tables = null;
            this.tableLengths = null;
        }
    }

    public KvLayout layout() {
        return layout;
    }

    public boolean isPaged() {
        return paging != null;
    }

    /** The block pool of a paged cache. */
    public KvPaging paging() {
        if (paging == null) {
            throw new IllegalStateException("flat KV cache has no paging");
        }
        return paging;
    }

    /** Bytes of off-heap memory held (keys and values, all layers). */
    public long totalBytes() {
        return 2L * layout.layers() * keys[0].byteSize();
    }

    /**
     * Sets the block table of {@code slot} (paged only): logical block {@code i < count} of the slot is physical block
     * {@code blocks[i]}. Copied; no allocation. The caller makes sure blocks written by one slot are not written by
     * another in the same step (shared prefix blocks are read-only).
     */
    public void setBlockTable(int slot, int[] blocks, int count) {
        if (paging == null) {
            throw new IllegalStateException("block tables need a paged KV cache");
        }
        if (slot < 0 || slot >= tables.length) {
            throw new IllegalArgumentException("sequence slot " + slot + " is outside 0.." + (tables.length - 1));
        }
        int[] t = tables[slot];
        if (count < 0 || count > t.length || count > blocks.length) {
            throw new IllegalArgumentException("block table of " + count + " blocks for slot " + slot + " (at most "
                    + t.length + " blocks of " + blockSize + " cover the context of " + layout.contextLength() + ")");
        }
        for (int i = 0; i < count; i++) {
            int b = blocks[i];
            if (b < 0 || b >= paging.numBlocks()) {
                throw new IllegalArgumentException("slot " + slot + ": block id " + b + " at " + i + " is outside the pool of "
                        + paging.numBlocks() + " blocks");
            }
            t[i] = b;
        }
        tableLengths[slot] = count;
    }

    /** Positions of {@code slot} that have memory behind them: the context (flat), or what its block table covers. */
    public int coveredPositions(int slot) {
        if (paging == null) {
            return layout.contextLength();
        }
        return (int) Math.min(layout.contextLength(), (long) tableLengths[slot] * blockSize);
    }

    private long element(int slot, int position) {
        if (tables != null) {
            int block = tables[slot][position / blockSize];
            return ((long) block * blockSize + position % blockSize) * kvDim;
        }
        return slot * slotStride + (long) position * kvDim;
    }

    /** Lane sum in a fixed pairwise order (a Vector API reduceLanes may reorder differently once compiled). */
    private static float sum(FloatVector v) {
        for (int h = F.length() >> 1; h >= 1; h >>= 1) {
            v = v.add(v.rearrange(ROTATE[h]));
        }
        return v.lane(0);
    }

    /** Stores the key and value of one position ({@code kvDim} values each). */
    public void store(int layer, int slot, int position, float[] k, int kOffset, float[] v, int vOffset) {
        long e = element(slot, position);
        MemorySegment ks = keys[layer];
        MemorySegment vs = values[layer];
        if (f16) {
            for (int i = 0; i < kvDim; i++) {
                ks.set(HALF, (e + i) * 2, Float.floatToFloat16(k[kOffset + i]));
                vs.set(HALF, (e + i) * 2, Float.floatToFloat16(v[vOffset + i]));
            }
        } else {
            MemorySegment.copy(k, kOffset, ks, FLOAT, e * 4, kvDim);
            MemorySegment.copy(v, vOffset, vs, FLOAT, e * 4, kvDim);
        }
    }

    /** {@code Σ_i q[qOffset+i] · K[position][dimOffset+i]} for {@code i < n}. */
    public float dotKey(int layer, int slot, int position, int dimOffset, float[] q, int qOffset, int n) {
        long e = element(slot, position) + dimOffset;
        MemorySegment ks = keys[layer];
        if (f16) {
            float s = 0f;
            for (int i = 0; i < n; i++) {
                s += q[qOffset + i] * Float.float16ToFloat(ks.get(HALF, (e + i) * 2));
            }
            return s;
        }
        int i = 0;
        float s = 0f;
        if (n >= F.length()) {
            FloatVector acc = FloatVector.zero(F);
            int bound = F.loopBound(n);
            for (; i < bound; i += F.length()) {
                FloatVector kv = FloatVector.fromMemorySegment(F, ks, (e + i) * 4, ByteOrder.LITTLE_ENDIAN);
                acc = FloatVector.fromArray(F, q, qOffset + i).fma(kv, acc);
            }
            s = sum(acc);
        }
        for (; i < n; i++) {
            s += q[qOffset + i] * ks.get(FLOAT, (e + i) * 4);
        }
        return s;
    }

    /**
     * {@code s[t] = dotKey(layer, slot, t, ...) * scale} for {@code from <= t <= to}, each bit-identical to that call: with
     * F16 keys four positions run side by side, each its own sequential sum (the scalar sum's latency chain was the
     * attention's cost).
     */
    public void dotKeys(int layer, int slot, int from, int to, int dimOffset, float[] q, int qOffset, int n, float scale,
                        float[] s) {
        int t = from;
        if (f16) {
            MemorySegment ks = keys[layer];
            for (; t + 3 <= to; t += 4) {
                long e0 = (element(slot, t) + dimOffset) * 2;
                long e1 = (element(slot, t + 1) + dimOffset) * 2;
                long e2 = (element(slot, t + 2) + dimOffset) * 2;
                long e3 = (element(slot, t + 3) + dimOffset) * 2;
                float s0 = 0f;
                float s1 = 0f;
                float s2 = 0f;
                float s3 = 0f;
                for (int i = 0; i < n; i++) {
                    float qi = q[qOffset + i];
                    long o = 2L * i;
                    s0 += qi * Float.float16ToFloat(ks.get(HALF, e0 + o));
                    s1 += qi * Float.float16ToFloat(ks.get(HALF, e1 + o));
                    s2 += qi * Float.float16ToFloat(ks.get(HALF, e2 + o));
                    s3 += qi * Float.float16ToFloat(ks.get(HALF, e3 + o));
                }
                s[t] = s0 * scale;
                s[t + 1] = s1 * scale;
                s[t + 2] = s2 * scale;
                s[t + 3] = s3 * scale;
            }
        }
        for (; t <= to; t++) {
            s[t] = dotKey(layer, slot, t, dimOffset, q, qOffset, n) * scale;
        }
    }

    /** {@code out[outOffset+i] += w · V[position][dimOffset+i]} for {@code i < n}. */
    public void addValue(int layer, int slot, int position, int dimOffset, float w, float[] out, int outOffset, int n) {
        long e = element(slot, position) + dimOffset;
        MemorySegment vs = values[layer];
        if (f16) {
            for (int i = 0; i < n; i++) {
                out[outOffset + i] += w * Float.float16ToFloat(vs.get(HALF, (e + i) * 2));
            }
            return;
        }
        int i = 0;
        int bound = F.loopBound(n);
        FloatVector wv = FloatVector.broadcast(F, w);
        for (; i < bound; i += F.length()) {
            FloatVector vv = FloatVector.fromMemorySegment(F, vs, (e + i) * 4, ByteOrder.LITTLE_ENDIAN);
            vv.fma(wv, FloatVector.fromArray(F, out, outOffset + i)).intoArray(out, outOffset + i);
        }
        for (; i < n; i++) {
            out[outOffset + i] += w * vs.get(FLOAT, (e + i) * 4);
        }
    }

    /** Whether keys and values are stored as F16. */
    public boolean isF16() {
        return f16;
    }

    /** The keys of one layer (for native kernels: element e at byte e·2 for F16, e·4 for F32). */
    public MemorySegment keySegment(int layer) {
        return keys[layer];
    }

    /** The values of one layer, laid out as {@link #keySegment}. */
    public MemorySegment valueSegment(int layer) {
        return values[layer];
    }

    /** {@code dst[t]} = the element index where position {@code t} of {@code slot} starts, for {@code from <= t <= to}. */
    public void elementOffsets(int slot, int from, int to, long[] dst) {
        for (int t = from; t <= to; t++) {
            dst[t] = element(slot, t);
        }
    }

    /** One stored key element (scalar reference path). */
    public float keyAt(int layer, int slot, int position, int i) {
        long e = element(slot, position) + i;
        return f16 ? Float.float16ToFloat(keys[layer].get(HALF, e * 2)) : keys[layer].get(FLOAT, e * 4);
    }

    /** One stored value element (scalar reference path). */
    public float valueAt(int layer, int slot, int position, int i) {
        long e = element(slot, position) + i;
        return f16 ? Float.float16ToFloat(values[layer].get(HALF, e * 2)) : values[layer].get(FLOAT, e * 4);
    }

    /** Copies the stored key of one position (for tests and debugging). */
    public void readKey(int layer, int slot, int position, float[] dst) {
        long e = element(slot, position);
        for (int i = 0; i < kvDim; i++) {
            dst[i] = f16 ? Float.float16ToFloat(keys[layer].get(HALF, (e + i) * 2)) : keys[layer].get(FLOAT, (e + i) * 4);
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
