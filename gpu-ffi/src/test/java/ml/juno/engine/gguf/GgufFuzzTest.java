package ml.juno.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Seeded mutation fuzzing of the reader: mutated copies of shipped models must either open with every invariant
 * intact or be refused with a {@link GgufFormatException} — never another exception, an error, or a hang.
 * {@code -Djuno.fuzz.iterations=N} (default 2000) and {@code -Djuno.fuzz.seed=S} run more or other cases; a failure
 * prints the seed and iteration that reproduce it.
 */
class GgufFuzzTest {

    private static final int ITERATIONS = Integer.getInteger("juno.fuzz.iterations", 2000);
    private static final long SEED = Long.getLong("juno.fuzz.seed", 0x6775_6666L);

    /** Small models with different shapes of metadata and tensor tables. */
    private static final List<String> CORPUS = List.of(
            "stories260K-Q4_0.gguf",
            "tiny-random/tiny-llama-random-Q2_K-pure.gguf",
            "tiny-random/tiny-qwen3moe-random-Q4_K_M.gguf",
            "tiny-random/tiny-gemma3-random-Q4_K_M.gguf",
            "llama-2-tiny-random.gguf"); // keep last: see the weighting in the loop

    private static final long[] INTERESTING = {0, 1, 2, 3, 4, 5, 7, 8, 12, 13, 31, 32, 33, 63, 64, 255, 256, 0x7f, 0x80,
            0xff, 0x7fff, 0x8000, 0xffff, 0x7fff_ffffL, 0x8000_0000L, 0xffff_ffffL, 1L << 32, 1L << 40, Long.MAX_VALUE,
            Long.MIN_VALUE, -1, -2};

    @Test
    @Timeout(300)
    void mutatedShippedModels_openCleanlyOrFailWithFormatException() throws IOException {
        List<byte[]> originals = CORPUS.stream().map(n -> read(TestModels.testdata().resolve(n))).toList();
        List<Long> headerEnds = originals.stream().map(GgufFuzzTest::dataOffset).toList();
        SplittableRandom rnd = new SplittableRandom(SEED);
        // One scratch buffer for every mutant: copying whole megabyte files per iteration makes the GC the bottleneck.
        byte[] scratch = new byte[originals.stream().mapToInt(b -> b.length).max().orElseThrow() + 4 * 16];
        int refused = 0;
        int opened = 0;
        for (int it = 0; it < ITERATIONS; it++) {
            // the last corpus file has a 32000-string vocabulary and parses ~50x slower: pick it 1 time in 25
            int which = rnd.nextInt(25) == 0 ? originals.size() - 1 : rnd.nextInt(originals.size() - 1);
            byte[] original = originals.get(which);
            int prefixLen = (int) Math.min(original.length, headerEnds.get(which) + 64);
            byte[] prefix = mutate(Arrays.copyOf(original, prefixLen), rnd);
            int length = prefix.length + original.length - prefixLen;
            if (rnd.nextInt(8) == 0) {
                length = rnd.nextInt(length + 1); // truncate anywhere, tensor data included
            }
            System.arraycopy(prefix, 0, scratch, 0, Math.min(prefix.length, length));
            if (length > prefix.length) {
                System.arraycopy(original, prefixLen, scratch, prefix.length, length - prefix.length);
            }
            try {
                if (check(MemorySegment.ofArray(scratch).asSlice(0, length))) {
                    opened++;
                } else {
                    refused++;
                }
            } catch (Throwable t) {
                fail("seed " + SEED + " iteration " + it + " (" + CORPUS.get(which) + "): " + t, t);
            }
        }
        assertTrue(refused > ITERATIONS / 20, "the fuzzer should produce refusable files, refused " + refused);
        assertTrue(opened > 0, "the fuzzer should also produce files that still open");
    }

    /** True if it opened and all invariants hold; false if refused properly; throws otherwise. */
    private static boolean check(MemorySegment bytes) throws IOException {
        GgufFile f;
        try {
            f = GgufFile.read(bytes);
        } catch (GgufFormatException e) {
            if (e.offset() == -1 && !e.field().isEmpty() && e.getMessage().startsWith(e.field() + ": ")) {
                return false; // a value out of its sane range (GgufSanity), named by its key
            }
            if (e.offset() < 0 || e.offset() > bytes.byteSize() || e.field().isEmpty()
                    || !e.getMessage().contains("byte offset " + e.offset())) {
                throw new AssertionError("badly described refusal: " + e.getMessage(), e);
            }
            return false;
        }
        try (f) {
            if (f.dataOffset() % f.alignment() != 0) {
                throw new AssertionError("unaligned data offset " + f.dataOffset());
            }
            long[][] ranges = new long[f.tensors().size()][];
            int i = 0;
            for (GgufTensorInfo t : f.tensors()) {
                long start = f.dataOffset() + t.offset();
                long end = start + t.byteSize();
                if (start < f.dataOffset() || end > bytes.byteSize() || t.offset() % f.alignment() != 0) {
                    throw new AssertionError("tensor " + t + " outside the file or misaligned");
                }
                if (f.data(t).byteSize() != t.byteSize()) {
                    throw new AssertionError("slice size of " + t);
                }
                ranges[i++] = new long[] {start, end};
            }
            Arrays.sort(ranges, (a, b) -> Long.compare(a[0], b[0]));
            for (int k = 1; k < ranges.length; k++) {
                if (ranges[k][0] < ranges[k - 1][1] && ranges[k][1] > ranges[k][0] && ranges[k - 1][1] > ranges[k - 1][0]) {
                    throw new AssertionError("overlapping tensors");
                }
            }
            for (String key : f.metadata().keys()) {
                f.metadata().getRaw(key);
                f.metadata().type(key);
            }
            return true;
        }
    }

    /** 1-4 mutations of the header, metadata and tensor table (the bytes the parser reads). */
    private static byte[] mutate(byte[] b, SplittableRandom rnd) {
        int mutations = 1 + rnd.nextInt(4);
        for (int m = 0; m < mutations && b.length > 0; m++) {
            int at = rnd.nextInt(b.length);
            switch (rnd.nextInt(7)) {
                case 0 -> b[at] ^= (byte) (1 << rnd.nextInt(8));
                case 1 -> b[at] = (byte) rnd.nextInt(256);
                case 2 -> put(b, at, INTERESTING[rnd.nextInt(INTERESTING.length)], 4);
                case 3 -> put(b, at, INTERESTING[rnd.nextInt(INTERESTING.length)], 8);
                case 4, 5 -> { // delete a few bytes
                    int n = Math.min(1 + rnd.nextInt(16), b.length - at);
                    byte[] c = new byte[b.length - n];
                    System.arraycopy(b, 0, c, 0, at);
                    System.arraycopy(b, at + n, c, at, b.length - at - n);
                    b = c;
                }
                default -> { // insert a few random bytes
                    int n = 1 + rnd.nextInt(Math.min(16, b.length));
                    byte[] c = new byte[b.length + n];
                    System.arraycopy(b, 0, c, 0, at);
                    for (int k = 0; k < n; k++) {
                        c[at + k] = (byte) rnd.nextInt(256);
                    }
                    System.arraycopy(b, at, c, at + n, b.length - at);
                    b = c;
                }
            }
        }
        return b;
    }

    private static void put(byte[] b, int at, long v, int width) {
        for (int i = 0; i < width && at + i < b.length; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    private static long dataOffset(byte[] bytes) {
        try (GgufFile f = GgufFile.read(MemorySegment.ofArray(bytes))) {
            return f.dataOffset();
        } catch (GgufFormatException e) {
            throw new IllegalStateException("corpus file does not open", e);
        }
    }

    private static byte[] read(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
