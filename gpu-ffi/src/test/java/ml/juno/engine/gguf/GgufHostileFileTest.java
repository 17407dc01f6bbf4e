package ml.juno.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One hand-made corrupt or hostile file per way a GGUF can be wrong. Each must be refused with a
 * {@link GgufFormatException} naming the field and the byte offset where it went wrong.
 */
class GgufHostileFileTest {

    private static final int F32 = GgmlType.F32.id;
    private static final int Q4_0 = GgmlType.Q4_0.id;

    @TempDir
    Path tmp;

    static GgufFormatException assertRejected(byte[] file, String field, long offset) {
        GgufFormatException e = assertThrows(GgufFormatException.class, () -> GgufFile.read(MemorySegment.ofArray(file)));
        assertTrue(e.field().contains(field), "field '" + e.field() + "' should name " + field + " — " + e.getMessage());
        assertEquals(offset, e.offset(), "offset in: " + e.getMessage());
        assertTrue(e.getMessage().contains("byte offset " + offset), e.getMessage());
        return e;
    }

    /** A valid file: one key, two F32 tensors of 8 floats. */
    static RawGguf valid() {
        return RawGguf.header(3, 2, 1).kvString("general.architecture", "llama")
                .tensor("a", F32, 0, 8).tensor("b", F32, 32, 8).pad(32).zeros(64);
    }

    @Test
    void theValidBaseline_opens() throws IOException {
        try (GgufFile f = GgufFile.read(valid().segment())) {
            assertEquals(2, f.tensors().size());
            assertEquals("llama", f.metadata().getString("general.architecture"));
        }
    }

    @Test
    void emptyFile_isRefusedAtMagic() {
        assertRejected(new byte[0], "magic", 0);
    }

    @Test
    void wrongMagic_isRefused() {
        byte[] b = valid().toBytes();
        b[0] = 'X';
        assertRejected(b, "magic", 0);
    }

    @Test
    void unsupportedVersions_areRefused() {
        for (int v : new int[] {0, 1, 4, 0x7fffffff}) {
            byte[] b = valid().toBytes();
            b[4] = (byte) v;
            b[5] = (byte) (v >>> 8);
            b[6] = (byte) (v >>> 16);
            b[7] = (byte) (v >>> 24);
            assertRejected(b, "version", 4);
        }
        byte[] be = RawGguf.header(0x03000000, 0, 0).toBytes();
        assertTrue(assertRejected(be, "version", 4).getMessage().contains("big-endian"));
    }

    @Test
    void headerCutShort_isRefusedAtTheMissingCount() {
        byte[] b = Arrays.copyOf(valid().toBytes(), 12);
        assertRejected(b, "tensor_count", 8);
        assertRejected(Arrays.copyOf(valid().toBytes(), 20), "metadata_kv_count", 16);
    }

    @Test
    void hugeCounts_areRefusedBeforeAllocating() {
        assertRejected(RawGguf.header(3, Long.MAX_VALUE, 0).toBytes(), "tensor_count", 8);
        assertRejected(RawGguf.header(3, -1, 0).toBytes(), "tensor_count", 8);
        assertRejected(RawGguf.header(3, 1_000_000, 0).zeros(1000).toBytes(), "tensor_count", 8);
        assertRejected(RawGguf.header(3, 0, 1L << 40).zeros(1000).toBytes(), "metadata_kv_count", 16);
    }

    @Test
    void keyLengthPastTheEnd_isRefused() {
        byte[] b = RawGguf.header(3, 0, 1).u64(1L << 60).zeros(16).toBytes();
        assertRejected(b, "metadata[0].key.length", 24);
        assertRejected(RawGguf.header(3, 0, 1).u64(-1).zeros(16).toBytes(), "metadata[0].key.length", 24);
    }

    @Test
    void keyThatIsNotUtf8_isRefused() {
        byte[] b = RawGguf.header(3, 0, 1).u64(2).u8(0xC3).u8(0x28).u32(GgufValueType.UINT8.id()).u8(0).toBytes();
        assertRejected(b, "metadata[0].key", 24);
    }

    @Test
    void unknownValueType_isRefused() {
        for (long type : new long[] {13, 0xFFFF_FFFFL}) {
            byte[] b = RawGguf.header(3, 0, 1).str("k").u32(type).u32(0).toBytes();
            assertRejected(b, "metadata[k].type", 33);
        }
    }

    @Test
    void valueCutShort_isRefused() {
        byte[] b = RawGguf.header(3, 0, 1).str("k").u32(GgufValueType.UINT64.id()).u32(0).toBytes();
        assertRejected(b, "metadata[k]", 37);
    }

    @Test
    void stringValueLongerThanTheFile_isRefused() {
        byte[] b = RawGguf.header(3, 0, 1).str("k").u32(GgufValueType.STRING.id()).u64(1000).zeros(10).toBytes();
        assertRejected(b, "metadata[k].length", 37);
    }

    @Test
    void arrayCountLargerThanTheFile_isRefused() {
        byte[] ints = RawGguf.header(3, 0, 1).str("k").u32(GgufValueType.ARRAY.id()).u32(GgufValueType.UINT32.id())
                .u64(1L << 62).zeros(64).toBytes();
        assertRejected(ints, "metadata[k].count", 41);
        // strings take at least 8 bytes each: 100 of them cannot fit in 64 bytes
        byte[] strs = RawGguf.header(3, 0, 1).str("k").u32(GgufValueType.ARRAY.id()).u32(GgufValueType.STRING.id())
                .u64(100).zeros(64).toBytes();
        assertRejected(strs, "metadata[k].count", 41);
    }

    @Test
    void arrayElementOfUnknownType_isRefused() {
        byte[] b = RawGguf.header(3, 0, 1).str("k").u32(GgufValueType.ARRAY.id()).u32(99).u64(0).toBytes();
        assertRejected(b, "metadata[k].element_type", 37);
    }

    @Test
    void arraysNestedTooDeep_areRefused() {
        RawGguf r = RawGguf.header(3, 0, 1).str("k").u32(GgufValueType.ARRAY.id());
        for (int i = 0; i < 100; i++) {
            r.u32(GgufValueType.ARRAY.id()).u64(1);
        }
        r.u32(GgufValueType.UINT8.id()).u64(0);
        GgufFormatException e = assertThrows(GgufFormatException.class, () -> GgufFile.read(r.segment()));
        assertTrue(e.getMessage().contains("nested deeper"), e.getMessage());
    }

    @Test
    void stringInsideArrayCutShort_isRefused() {
        byte[] b = RawGguf.header(3, 0, 1).str("k").u32(GgufValueType.ARRAY.id()).u32(GgufValueType.STRING.id())
                .u64(2).str("ok").u64(500).zeros(8).toBytes();
        assertRejected(b, "metadata[k][1].length", 59);
    }

    @Test
    void boolOtherThanZeroOrOne_isRefused() {
        byte[] b = RawGguf.header(3, 0, 1).str("k").u32(GgufValueType.BOOL.id()).u8(2).toBytes();
        assertRejected(b, "metadata[k]", 37);
    }

    @Test
    void duplicateKey_isRefused() {
        RawGguf r = RawGguf.header(3, 0, 2).kvU32("k", 1);
        int second = r.position();
        assertRejected(r.kvU32("k", 2).toBytes(), "metadata[1].key", second);
    }

    @Test
    void alignmentOfWrongTypeZeroOrNotPowerOfTwo_isRefused() {
        byte[] wrongType = RawGguf.header(3, 0, 1).str(GgufKeys.GENERAL_ALIGNMENT).u32(GgufValueType.UINT64.id()).u64(32).toBytes();
        assertRejected(wrongType, "general.alignment].type", 24 + 8 + 17);
        for (long a : new long[] {0, 3, 48, 0xFFFF_FFFFL}) {
            byte[] b = RawGguf.header(3, 0, 1).kvU32(GgufKeys.GENERAL_ALIGNMENT, a).toBytes();
            assertRejected(b, "metadata[general.alignment]", 24 + 8 + 17 + 4);
        }
    }

    @Test
    void tensorWithZeroOrTooManyDimensions_isRefused() {
        for (int n : new int[] {0, 5, -1}) {
            RawGguf r = RawGguf.header(3, 1, 0).str("t");
            int at = r.position();
            byte[] b = r.u32(n).u64(8).u64(1).u64(1).u64(1).u64(1).u32(F32).u64(0).zeros(64).toBytes();
            assertRejected(b, "tensor[0:t].n_dims", at);
        }
    }

    @Test
    void tensorDimensionsThatOverflowOrExceedTheFile_areRefused() {
        RawGguf r = RawGguf.header(3, 1, 0).str("t").u32(2).u64(1L << 40);
        int second = r.position();
        byte[] overflow = r.u64(1L << 40).u32(F32).u64(0).zeros(64).toBytes();
        assertRejected(overflow, "tensor[0:t].dims[1]", second);
        RawGguf r2 = RawGguf.header(3, 1, 0).str("t");
        int dims = r2.position() + 4;
        byte[] huge = r2.u32(2).u64(1 << 20).u64(1 << 20).u32(F32).u64(0).zeros(64).toBytes();
        assertRejected(huge, "tensor[0:t].dims", dims);
        RawGguf r3 = RawGguf.header(3, 1, 0).str("t").u32(1);
        int d0 = r3.position();
        assertRejected(r3.u64(-5).u32(F32).u64(0).zeros(64).toBytes(), "tensor[0:t].dims[0]", d0);
    }

    @Test
    void unknownOrRemovedTensorType_isRefused() {
        for (int type : new int[] {4, 5, 99, -1}) { // 4 and 5 were Q4_2/Q4_3, removed from ggml
            RawGguf r = RawGguf.header(3, 1, 0).str("t").u32(1).u64(32);
            int at = r.position();
            assertRejected(r.u32(type).u64(0).zeros(64).toBytes(), "tensor[0:t].type", at);
        }
    }

    @Test
    void rowLengthNotAWholeNumberOfBlocks_isRefused() {
        RawGguf r = RawGguf.header(3, 1, 0).str("t");
        int dims = r.position() + 4;
        assertRejected(r.u32(1).u64(31).u32(Q4_0).u64(0).pad(32).zeros(64).toBytes(), "tensor[0:t].dims[0]", dims);
    }

    @Test
    void misalignedTensorOffset_isRefused() {
        RawGguf r = RawGguf.header(3, 1, 0).str("t").u32(1).u64(4).u32(F32);
        int at = r.position();
        assertRejected(r.u64(4).pad(32).zeros(64).toBytes(), "tensor[0:t].offset", at);
    }

    @Test
    void tensorPastTheEndOfTheFile_isRefused() {
        RawGguf r = RawGguf.header(3, 1, 0).str("t").u32(1).u64(64).u32(F32);
        int at = r.position();
        byte[] b = r.u64(0).pad(32).zeros(250).toBytes(); // needs 256 bytes of data, the file is smaller than header + 256
        GgufFormatException e = assertRejected(b, "tensor[0:t].offset", at);
        assertTrue(e.getMessage().contains("past the end"), e.getMessage());
        RawGguf r2 = RawGguf.header(3, 1, 0).str("t").u32(1).u64(8).u32(F32);
        int at2 = r2.position();
        assertRejected(r2.u64(1L << 62).pad(32).zeros(64).toBytes(), "tensor[0:t].offset", at2);
    }

    @Test
    void overlappingTensors_areRefused() {
        RawGguf r = RawGguf.header(3, 2, 0).tensor("a", F32, 0, 16);
        int bAt = r.position() + 8 + 1 + 4 + 8 + 4; // offset field of "b"
        byte[] b = r.tensor("b", F32, 32, 16).pad(32).zeros(128).toBytes(); // a is [0,64), b starts at 32
        GgufFormatException e = assertRejected(b, "tensor[1:b].offset", bAt);
        assertTrue(e.getMessage().contains("overlaps tensor a"), e.getMessage());
    }

    @Test
    void duplicateTensorName_isRefused() {
        RawGguf r = RawGguf.header(3, 2, 0).tensor("a", F32, 0, 8);
        int second = r.position();
        assertRejected(r.tensor("a", F32, 32, 8).pad(32).zeros(64).toBytes(), "tensor[1].name", second);
    }

    @Test
    void fileCutInsideTheTensorTable_isRefused() {
        byte[] whole = valid().toBytes();
        RawGguf prefix = RawGguf.header(3, 2, 1).kvString("general.architecture", "llama").tensor("a", F32, 0, 8).str("b");
        int nDimsAt = prefix.position();
        assertRejected(Arrays.copyOf(whole, nDimsAt + 2), "tensor[1:b].n_dims", nDimsAt);
    }

    @Test
    void fileCutInsideTensorData_isRefused() {
        byte[] whole = valid().toBytes();
        GgufFormatException e = assertThrows(GgufFormatException.class,
                () -> GgufFile.read(MemorySegment.ofArray(Arrays.copyOf(whole, whole.length - 1))));
        assertTrue(e.field().startsWith("tensor[1:b]"), e.getMessage());
    }

    @Test
    void hostileFileOnDisk_isRefusedByOpen_andMissingFileIsAnIoError() throws IOException {
        Path p = tmp.resolve("bad.gguf");
        byte[] b = valid().toBytes();
        b[4] = 9;
        Files.write(p, b);
        GgufFormatException e = assertThrows(GgufFormatException.class, () -> GgufFile.open(p));
        assertEquals("version", e.field());
        assertThrows(NoSuchFileException.class, () -> GgufFile.open(tmp.resolve("missing.gguf")));
    }
}
