package ml.juno.engine.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

class HalfTest {

    @Test
    void fromFloat_roundsToNearestEvenLikeIeee_onEdgeCasesAndRandomBits() throws Exception {
        JsonNode r = DequantizeTest.readResource("/quant/gguf-py-reference.json").get("rounding");
        int n = r.get("f32_bits").size();
        assertTrue(n > 1000);
        for (int i = 0; i < n; i++) {
            float f = Float.intBitsToFloat((int) r.get("f32_bits").get(i).asLong());
            short want = (short) r.get("f16_bits").get(i).asInt();
            assertEquals(want, Half.fromFloat(f), "fp16 of " + f + " (bits " + Integer.toHexString(Float.floatToRawIntBits(f)) + ")");
        }
    }

    @Test
    void floatToBf16_matchesGgmlRounding_onEdgeCasesAndRandomBits() throws Exception {
        JsonNode r = DequantizeTest.readResource("/quant/gguf-py-reference.json").get("rounding");
        for (int i = 0; i < r.get("f32_bits").size(); i++) {
            float f = Float.intBitsToFloat((int) r.get("f32_bits").get(i).asLong());
            short want = (short) r.get("bf16_bits").get(i).asInt();
            assertEquals(want, Half.floatToBf16(f), "bf16 of " + f);
        }
    }

    @Test
    void roundTrips_everyHalfAndBf16BitPatternExceptNaNPayloads() {
        for (int h = 0; h < 65536; h++) {
            float f = Half.toFloat((short) h);
            if (Float.isNaN(f)) {
                assertTrue(Float.isNaN(Half.bf16ToFloat(Half.floatToBf16(f))));
                continue;
            }
            assertEquals((short) h, Half.fromFloat(f), "fp16 " + Integer.toHexString(h));
            float b = Half.bf16ToFloat((short) h);
            if (!Float.isNaN(b)) {
                assertEquals((short) h, Half.floatToBf16(b), "bf16 " + Integer.toHexString(h));
            }
        }
    }

    @Test
    void bf16OfNaN_isQuietNaN() {
        float signalling = Float.intBitsToFloat(0x7f800001);
        short b = Half.floatToBf16(signalling);
        assertTrue(Float.isNaN(Half.bf16ToFloat(b)));
        assertEquals(0x7f80 | 64, b & 0xFFFF);
    }
}
