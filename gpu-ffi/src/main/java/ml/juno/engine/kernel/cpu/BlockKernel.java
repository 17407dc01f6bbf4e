package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import ml.juno.engine.tensor.GgmlType;

/**
 * The CPU kernels of one block type, as ggml's {@code type_traits_cpu} holds them per type: how its rows decode to
 * floats, in vector code and in a scalar reference with the same arithmetic as ggml's {@code dequantize_row_*} (the
 * two give the same bits). Quantized types add their integer dot products ({@link QuantKernel}); the float types have
 * theirs in {@link FloatKernel}. One instance per type, reached through {@link CpuTypeTraits}; each type is its own
 * class so that the JIT compiles each type's vector code as its own methods, never one method holding every type's.
 */
abstract class BlockKernel {
    /**
     * The float species of the decoders, and a byte species with one lane per float lane (a byte load widens lane for
     * lane).
     */
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    static final VectorSpecies<Byte> B = F.length() == 16 ? ByteVector.SPECIES_128 : ByteVector.SPECIES_64;
    static final int L = F.length();
    /** Vector decoders are written for 8 or 16 float lanes; other machines decode scalar. */
    private static final boolean VECTOR = L == 8 || L == 16;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);

    final GgmlType type;

    BlockKernel(GgmlType type) {
        this.type = type;
    }

    /** Decodes {@code count} elements (whole blocks) from byte {@code off} of {@code s} into {@code dst[dstOff..]}. */
    final void decode(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        if (VECTOR) {
            decodeVector(s, off, dst, dstOff, count);
        } else {
            decodeScalar(s, off, dst, dstOff, count);
        }
    }

    /**
     * {@link #decode} in vector code: the same values as {@link #decodeScalar}, bit for bit (same float operations, no
     * fusing), a vector of lanes at a time. Types without a vector decoder decode scalar.
     */
    void decodeVector(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        decodeScalar(s, off, dst, dstOff, count);
    }

    /** The scalar reference of {@link #decode}: one element at a time, as ggml's {@code dequantize_row_*}. */
    abstract void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count);

    @Override
    public String toString() {
        return type + " kernel";
    }

    // ---- scalar helpers shared by the decoders

    static float half(MemorySegment s, long o) {
        return Float.float16ToFloat(s.get(U16, o));
    }

    static float bf16(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    static int u8(MemorySegment s, long o) {
        return s.get(ValueLayout.JAVA_BYTE, o) & 0xFF;
    }

    static int i8(MemorySegment s, long o) {
        return s.get(ValueLayout.JAVA_BYTE, o);
    }

    /** Bytes widened to float lanes of {@link #F}. */
    static FloatVector bytesToFloats(ByteVector v) {
        return (FloatVector) v.convertShape(VectorOperators.B2F, F, 0);
    }
}
