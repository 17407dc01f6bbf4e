package ml.juno.model.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

class ActivationCodecTest {

    static final ByteOrder[] ORDERS = {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN};

    static float[] randomActivations(int n, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) (rnd.nextGaussian() * 3.0);
        }
        return x;
    }

    @Test
    void float32_roundTripsExactlyInBothByteOrders() {
        float[] x = randomActivations(3 * 17, 1);
        x[5] = Float.MIN_VALUE;
        x[6] = -0.0f;
        for (ByteOrder order : ORDERS) {
            ActivationCodec codec = new ActivationCodec(ActivationDtype.FLOAT32, order);
            float[] back = new float[x.length];
            codec.decode(codec.encode(x, 0, 3, 17), 3, 17, back, 0);
            assertArrayEquals(x, back);
        }
    }

    @Test
    void float16_roundTripsWithinHalfPrecision() {
        float[] x = randomActivations(4 * 64, 2);
        for (ByteOrder order : ORDERS) {
            ActivationCodec codec = new ActivationCodec(ActivationDtype.FLOAT16, order);
            float[] back = new float[x.length];
            codec.decode(codec.encode(x, 0, 4, 64), 4, 64, back, 0);
            for (int i = 0; i < x.length; i++) {
                assertEquals(x[i], back[i], Math.abs(x[i]) * 0x1p-11 + 1e-7, "index " + i);
            }
        }
    }

    @Test
    void int8_roundTripsWithinHalfAStepOfEachRowsScale() {
        int rows = 5;
        int cols = 33;
        float[] x = randomActivations(rows * cols, 3);
        Arrays.fill(x, 2 * cols, 3 * cols, 0f); // an all-zero row
        for (ByteOrder order : ORDERS) {
            ActivationCodec codec = new ActivationCodec(ActivationDtype.INT8, order);
            byte[] wire = codec.encode(x, 0, rows, cols);
            assertEquals(rows * (4 + cols), wire.length);
            float[] back = new float[x.length];
            codec.decode(wire, rows, cols, back, 0);
            for (int r = 0; r < rows; r++) {
                float amax = 0;
                for (int c = 0; c < cols; c++) {
                    amax = Math.max(amax, Math.abs(x[r * cols + c]));
                }
                float step = amax / 127f;
                for (int c = 0; c < cols; c++) {
                    int i = r * cols + c;
                    assertEquals(x[i], back[i], step * 0.5f + 1e-6f, "row " + r + " col " + c);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ActivationDtype.class)
    void byteOrder_changesTheBytesButNotTheValues(ActivationDtype dtype) {
        float[] x = randomActivations(2 * 8, 4);
        byte[] le = new ActivationCodec(dtype, ByteOrder.LITTLE_ENDIAN).encode(x, 0, 2, 8);
        byte[] be = new ActivationCodec(dtype, ByteOrder.BIG_ENDIAN).encode(x, 0, 2, 8);
        assertNotEquals(Arrays.toString(le), Arrays.toString(be));
        float[] a = new float[16];
        float[] b = new float[16];
        new ActivationCodec(dtype, ByteOrder.LITTLE_ENDIAN).decode(le, 2, 8, a, 0);
        new ActivationCodec(dtype, ByteOrder.BIG_ENDIAN).decode(be, 2, 8, b, 0);
        assertArrayEquals(a, b);
    }

    @Test
    void decode_refusesAPayloadOfTheWrongSize() {
        ActivationCodec codec = new ActivationCodec(ActivationDtype.FLOAT16, ByteOrder.LITTLE_ENDIAN);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> codec.decode(new byte[10], 2, 4, new float[8], 0));
        assertTrue(e.getMessage().contains("needs 16 bytes, got 10"), e.getMessage());
    }

    @Test
    void int8_refusesNonFiniteActivations() {
        ActivationCodec codec = new ActivationCodec(ActivationDtype.INT8, ByteOrder.LITTLE_ENDIAN);
        assertThrows(IllegalArgumentException.class, () -> codec.encode(new float[] {1f, Float.NaN}, 0, 1, 2));
    }

    @Test
    void parse_acceptsAnyCaseAndNamesTheChoicesOnError() {
        assertEquals(ActivationDtype.INT8, ActivationDtype.parse("int8"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ActivationDtype.parse("FP8"));
        assertTrue(e.getMessage().contains("FLOAT32, FLOAT16 or INT8"));
    }
}
