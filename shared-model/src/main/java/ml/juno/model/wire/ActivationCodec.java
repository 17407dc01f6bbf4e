package ml.juno.model.wire;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Encodes a row-major {@code [rows, cols]} float matrix of activations for the wire, and decodes it.
 *
 * <ul>
 *   <li>FLOAT32: IEEE single, exact.</li>
 *   <li>FLOAT16: IEEE half, round to nearest even (values beyond ±65504 become ±infinity).</li>
 *   <li>INT8: per row, a float32 scale {@code s = max|x| / 127} followed by {@code cols} signed bytes
 *       {@code round(x / s)}; decoding gives {@code q * s}. An all-zero row has scale 0.</li>
 * </ul>
 * Multi-byte values use the chosen byte order. One codec per (dtype, order) ({@link #of}); instances are immutable
 * and thread-safe.
 */
public final class ActivationCodec {
    private static final ActivationCodec[] CODECS = new ActivationCodec[ActivationDtype.values().length * 2];

    static {
        for (ActivationDtype d : ActivationDtype.values()) {
            CODECS[d.ordinal() * 2] = new ActivationCodec(d, ByteOrder.LITTLE_ENDIAN);
            CODECS[d.ordinal() * 2 + 1] = new ActivationCodec(d, ByteOrder.BIG_ENDIAN);
        }
    }

    private final ActivationDtype dtype;
    private final ByteOrder order;
    private final boolean le;
    // static final view handles: the JIT inlines them (a layout held in an instance field it does not, ~30 ns a value)
    private static final VarHandle F32_LE = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle F32_BE = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle I16_LE = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I16_BE = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);

    public ActivationCodec(ActivationDtype dtype, ByteOrder order) {
        this.dtype = dtype;
        this.order = order;
        this.le = order == ByteOrder.LITTLE_ENDIAN;
    }

    /** The shared codec of {@code dtype} in {@code order}. */
    public static ActivationCodec of(ActivationDtype dtype, ByteOrder order) {
        return CODECS[dtype.ordinal() * 2 + (order == ByteOrder.BIG_ENDIAN ? 1 : 0)];
    }

    public ActivationDtype dtype() {
        return dtype;
    }

    public ByteOrder order() {
        return order;
    }

    /** Encodes {@code src[offset .. offset + rows*cols)} into a new byte array. */
    public byte[] encode(float[] src, int offset, int rows, int cols) {
        checkShape(src.length - offset, rows, cols);
        byte[] out = new byte[Math.toIntExact(dtype.encodedBytes(rows, cols))];
        encodeInto(src, offset, rows, cols, out);
        return out;
    }

    /**
     * Encodes {@code src[offset .. offset + rows*cols)} into the start of {@code out} (at least
     * {@code dtype.encodedBytes(rows, cols)} long, e.g. a buffer kept for the next call); returns the bytes written.
     */
    public int encodeInto(float[] src, int offset, int rows, int cols, byte[] out) {
        checkShape(src.length - offset, rows, cols);
        int length = Math.toIntExact(dtype.encodedBytes(rows, cols));
        if (out.length < length) {
            throw new IllegalArgumentException(dtype + " tensor [" + rows + ", " + cols + "] needs " + length
                    + " bytes, the buffer has " + out.length);
        }
        int n = rows * cols;
        switch (dtype) {
            case FLOAT32 -> {
                for (int i = 0; i < n; i++) {
                    putF32(out, 4 * i, src[offset + i]);
                }
            }
            case FLOAT16 -> {
                for (int i = 0; i < n; i++) {
                    short h = Float.floatToFloat16(src[offset + i]);
                    if (le) {
                        I16_LE.set(out, 2 * i, h);
                    } else {
                        I16_BE.set(out, 2 * i, h);
                    }
                }
            }
            case INT8 -> {
                long pos = 0;
                for (int r = 0; r < rows; r++) {
                    int base = offset + r * cols;
                    float amax = 0f;
                    for (int c = 0; c < cols; c++) {
                        amax = Math.max(amax, Math.abs(src[base + c]));
                    }
                    if (!Float.isFinite(amax)) {
                        throw new IllegalArgumentException("row " + r + " holds a non-finite activation; INT8 cannot encode it");
                    }
                    float scale = amax / 127f;
                    float inv = scale == 0f ? 0f : 1f / scale;
                    putF32(out, (int) pos, scale);
                    pos += 4;
                    for (int c = 0; c < cols; c++) {
                        out[(int) pos++] = (byte) Math.round(src[base + c] * inv);
                    }
                }
            }
        }
        return length;
    }

    /** Decodes {@code bytes} (exactly {@code dtype.encodedBytes(rows, cols)} long) into {@code dst[offset ..]}. */
    public void decode(byte[] bytes, int rows, int cols, float[] dst, int offset) {
        decode(bytes, bytes.length, rows, cols, dst, offset);
    }

    /**
     * Decodes the first {@code length} bytes of {@code bytes} (exactly {@code dtype.encodedBytes(rows, cols)} of them,
     * e.g. in a buffer kept for the next call) into {@code dst[offset ..]}.
     */
    public void decode(byte[] bytes, int length, int rows, int cols, float[] dst, int offset) {
        long expected = dtype.encodedBytes(rows, cols);
        if (length != expected || length > bytes.length) {
            throw new IllegalArgumentException(dtype + " tensor [" + rows + ", " + cols + "] needs " + expected
                    + " bytes, got " + length);
        }
        checkShape(dst.length - offset, rows, cols);
        int n = rows * cols;
        switch (dtype) {
            case FLOAT32 -> {
                for (int i = 0; i < n; i++) {
                    dst[offset + i] = getF32(bytes, 4 * i);
                }
            }
            case FLOAT16 -> {
                for (int i = 0; i < n; i++) {
                    dst[offset + i] = Float.float16ToFloat(le ? (short) I16_LE.get(bytes, 2 * i) : (short) I16_BE.get(bytes, 2 * i));
                }
            }
            case INT8 -> {
                long pos = 0;
                for (int r = 0; r < rows; r++) {
                    float scale = getF32(bytes, (int) pos);
                    pos += 4;
                    int base = offset + r * cols;
                    for (int c = 0; c < cols; c++) {
                        dst[base + c] = bytes[(int) pos++] * scale;
                    }
                }
            }
        }
    }

    private void putF32(byte[] b, int at, float v) {
        if (le) {
            F32_LE.set(b, at, v);
        } else {
            F32_BE.set(b, at, v);
        }
    }

    private float getF32(byte[] b, int at) {
        return le ? (float) F32_LE.get(b, at) : (float) F32_BE.get(b, at);
    }

    private static void checkShape(int available, int rows, int cols) {
        if (rows < 0 || cols < 0) {
            throw new IllegalArgumentException("negative shape [" + rows + ", " + cols + "]");
        }
        if ((long) rows * cols > available) {
            throw new IllegalArgumentException("shape [" + rows + ", " + cols + "] exceeds the " + available + " values available");
        }
    }
}
