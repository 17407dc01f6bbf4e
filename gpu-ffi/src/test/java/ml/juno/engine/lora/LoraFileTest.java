package ml.juno.engine.lora;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.model.block.Projection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code .lora} file: round trip, atomic writes, and one clear error per kind of bad file. */
class LoraFileTest {
    @TempDir
    Path dir;

    private static LoraAdapter adapter(GgufFile base) {
        return LoraFixtures.random(base, List.of(Projection.Q, Projection.V, Projection.DOWN), 4, 8f, true, 7, 0.1f);
    }

    static void assertSame(LoraAdapter want, LoraAdapter got) {
        assertEquals(want.header(), got.header());
        assertEquals(want.pairs().size(), got.pairs().size());
        for (int i = 0; i < want.pairs().size(); i++) {
            LoraPair w = want.pairs().get(i);
            LoraPair g = got.pairs().get(i);
            assertEquals(w.layer(), g.layer());
            assertEquals(w.target(), g.target());
            assertArrayEquals(w.a(), g.a(), "A of " + w.layer() + " " + w.target());
            assertArrayEquals(w.b(), g.b(), "B of " + w.layer() + " " + w.target());
        }
    }

    @Test
    void writtenAdapter_readsBackEqual_andLeavesNoTemporaryFile() throws Exception {
        try (GgufFile base = GgufFile.open(LoraFixtures.model("stories260K.gguf"))) {
            LoraAdapter a = adapter(base);
            Path p = dir.resolve("a.lora");
            LoraFile.write(p, a);
            assertSame(a, LoraFile.read(p));
            try (var files = Files.list(dir)) {
                assertEquals(List.of(p), files.toList());
            }
            assertTrue(LoraFile.isLoraFile(p));
            assertEquals("rw-r--r--", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(p)),
                    "an ordinary file, not the temporary file's owner-only mode");
            assertEquals(8f / (float) Math.sqrt(4), a.header().scale(4), 1e-7f, "rsLoRA scale alpha/sqrt(r)");
        }
    }

    @Test
    void adapterForAnotherBase_isRefusedNamingBoth() throws Exception {
        Path p = dir.resolve("a.lora");
        try (GgufFile base = GgufFile.open(LoraFixtures.model("stories260K.gguf"))) {
            LoraFile.write(p, adapter(base));
        }
        try (GgufFile other = GgufFile.open(LoraFixtures.model("tiny-llama-random-F32.gguf"))) {
            IOException e = assertThrows(IOException.class, () -> LoraAdapters.load(p, other));
            assertTrue(e.getMessage().contains("was made for base") && e.getMessage().contains("not for this model"), e.getMessage());
            assertTrue(e.getMessage().contains(BaseFingerprint.of(other).tensorTable()), e.getMessage());
        }
        try (GgufFile sameModelOtherType = GgufFile.open(LoraFixtures.model("stories260K-Q8_0.gguf"))) {
            // same tensor table (names and shapes): an adapter fits every quantization of its base
            assertEquals(4, LoraAdapters.load(p, sameModelOtherType).header().rank());
        }
    }

    @Test
    void truncatedOrCorruptFile_isRefused() throws Exception {
        Path p = dir.resolve("a.lora");
        try (GgufFile base = GgufFile.open(LoraFixtures.model("stories260K.gguf"))) {
            LoraFile.write(p, adapter(base));
        }
        byte[] bytes = Files.readAllBytes(p);
        Path cut = dir.resolve("cut.lora");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length / 2));
        IOException e = assertThrows(IOException.class, () -> LoraFile.read(cut));
        assertTrue(e.getMessage().contains("corrupt or truncated"), e.getMessage());
        Files.write(cut, Arrays.copyOf(bytes, 10));
        e = assertThrows(IOException.class, () -> LoraFile.read(cut));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        byte[] flipped = bytes.clone();
        flipped[bytes.length - 100] ^= 0x40;
        Path bad = dir.resolve("bad.lora");
        Files.write(bad, flipped);
        e = assertThrows(IOException.class, () -> LoraFile.read(bad));
        assertTrue(e.getMessage().contains("corrupt"), e.getMessage());
        Files.writeString(bad, "hello, not an adapter at all");
        e = assertThrows(IOException.class, () -> LoraFile.read(bad));
        assertTrue(e.getMessage().contains("not a .lora file"), e.getMessage());
    }

    /** Patches a valid file at the offset of the header's rank (after a known-length prefix) and fixes the CRC. */
    private static byte[] withCrc(byte[] b) {
        CRC32 crc = new CRC32();
        crc.update(b, 0, b.length - 4);
        ByteBuffer.wrap(b, b.length - 4, 4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) crc.getValue());
        return b;
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    @Test
    void rankZeroOrUnknownTarget_isRefused() throws Exception {
        Path p = dir.resolve("a.lora");
        LoraAdapter a;
        try (GgufFile base = GgufFile.open(LoraFixtures.model("stories260K.gguf"))) {
            a = adapter(base);
            LoraFile.write(p, a);
        }
        byte[] bytes = Files.readAllBytes(p);
        // the header's rank and alpha follow the tensor-table hash
        byte[] hash = a.header().base().tensorTable().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int rankAt = indexOf(bytes, hash) + hash.length;
        byte[] zero = bytes.clone();
        ByteBuffer.wrap(zero, rankAt, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(0);
        Path z = dir.resolve("zero.lora");
        Files.write(z, withCrc(zero));
        IOException e = assertThrows(IOException.class, () -> LoraFile.read(z));
        assertTrue(e.getMessage().contains("rank must be positive"), e.getMessage());

        byte[] unknown = bytes.clone();
        int down = indexOf(unknown, "down".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        unknown[down] = 'x';
        Path u = dir.resolve("unknown.lora");
        Files.write(u, withCrc(unknown));
        e = assertThrows(IOException.class, () -> LoraFile.read(u));
        assertTrue(e.getMessage().contains("unknown LoRA target 'xown'"), e.getMessage());

        assertThrows(IllegalArgumentException.class, () -> Projection.parseList("q,zz"));
        assertThrows(IllegalArgumentException.class, () -> new LoraPair(0, Projection.Q, 0, 64, 64, new float[0], new float[0]));
    }
}
