package ml.juno.engine.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Off-heap keys and values, {@code [layer][slot][position][kvDim]} each, F32 or F16. All access goes through this
 * class (store a row, dot a query with a key, accumulate a weighted value), so a paged layout can replace the flat one
 * without touching the kernels.
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

    public KvCache(KvLayout layout) {
        this.layout = layout;
        this.arena = Arena.ofShared();
        this.keys = new MemorySegment[layout.layers()];
        this.values = new MemorySegment[layout.layers()];
        for (int l = 0; l < layout.layers(); l++) {
            keys[l] = arena.allocate(layout.layerBytes(), 64);
            values[l] = arena.allocate(layout.layerBytes(), 64);
        }
        this.f16 = layout.type() == KvType.F16;
        this.kvDim = layout.kvDim();
        this.slotStride = (long) layout.contextLength() * kvDim;
    }

    public KvLayout layout() {
        return layout;
    }

    private long element(int slot, int position) {
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
