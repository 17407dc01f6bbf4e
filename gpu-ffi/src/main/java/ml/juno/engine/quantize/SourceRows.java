package ml.juno.engine.quantize;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import ml.juno.engine.tensor.GgmlType;

/** Float rows read from a tensor stored as F32, F16 or BF16 (the source types the quantizer accepts). */
final class SourceRows implements TensorWriteJob.FloatRows {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment data;
    private final GgmlType type;
    private final int rowLength;

    SourceRows(MemorySegment data, GgmlType type, long rowLength) {
        if (!isSupported(type)) {
            throw new IllegalArgumentException("cannot read rows of type " + type);
        }
        this.data = data;
        this.type = type;
        this.rowLength = Math.toIntExact(rowLength);
    }

    static boolean isSupported(GgmlType type) {
        return type == GgmlType.F32 || type == GgmlType.F16 || type == GgmlType.BF16;
    }

    @Override
    public void read(long firstRow, int rowCount, float[] dst) {
        int n = rowCount * rowLength;
        long start = firstRow * rowLength;
        switch (type) {
            case F32 -> MemorySegment.copy(data, F32, start * 4, dst, 0, n);
            case F16 -> {
                for (int i = 0; i < n; i++) {
                    dst[i] = Float.float16ToFloat(data.get(U16, (start + i) * 2));
                }
            }
            default -> {
                for (int i = 0; i < n; i++) {
                    dst[i] = Float.intBitsToFloat(data.get(U16, (start + i) * 2) << 16);
                }
            }
        }
    }
}
