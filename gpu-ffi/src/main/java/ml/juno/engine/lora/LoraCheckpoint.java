package ml.juno.engine.lora;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * A LoRA training checkpoint: everything a run needs to go on exactly as if it had not stopped. Little-endian:
 * <pre>
 *   "JUNOCKPT"                          8 bytes magic
 *   u32 version                         {@link #VERSION}
 *   u32 steps done
 *   u32 settings, (str key, str value) each      the options and a hash of the data ({@link LoraTraining.Run#settings})
 *   f64 loss of each step done
 *   f64 best validation loss (NaN: none yet), u32 its step
 *   u32 bytes, the adapter as a .lora file
 *   u8 best kept, then u32 bytes, the best adapter as a .lora file
 *   per pair of the adapter, in order: f32 first moment of A, of B, second moment of A, of B (AdamW)
 *   u32 CRC-32 of every byte before it
 * </pre>
 * Written atomically (temporary file + rename), so a crash leaves the previous checkpoint whole.
 */
public record LoraCheckpoint(int steps, Map<String, String> settings, double[] losses, double bestValLoss, int bestStep,
                             LoraAdapter adapter, LoraAdapter best, float[][][] moments) {
    static final byte[] MAGIC = "JUNOCKPT".getBytes(StandardCharsets.US_ASCII);
    public static final int VERSION = 1;

    public LoraCheckpoint {
        settings = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(settings));
        if (losses.length != steps || moments.length != adapter.pairs().size()) {
            throw new IllegalArgumentException("checkpoint of " + steps + " steps has " + losses.length + " losses and "
                    + moments.length + " moment sets for " + adapter.pairs().size() + " pairs");
        }
    }

    /** Whether {@code path} starts with the checkpoint magic. */
    public static boolean isCheckpoint(Path path) throws IOException {
        try (var in = Files.newInputStream(path)) {
            return java.util.Arrays.equals(in.readNBytes(MAGIC.length), MAGIC);
        }
    }

    public void write(Path path) throws IOException {
        byte[] a = LoraFile.encode(adapter);
        byte[] b = best == null ? new byte[0] : LoraFile.encode(best);
        long size = 64 + 8L * losses.length + a.length + b.length;
        for (var e : settings.entrySet()) {
            size += 8 + 3L * (e.getKey().length() + e.getValue().length());
        }
        for (float[][] m : moments) {
            for (float[] x : m) {
                size += 4L * x.length;
            }
        }
        if (size > Integer.MAX_VALUE - 64) {
            throw new IOException("a checkpoint of " + size + " bytes is too large for one file");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
        buf.put(MAGIC).putInt(VERSION).putInt(steps);
        buf.putInt(settings.size());
        for (var e : settings.entrySet()) {
            putStr(buf, e.getKey());
            putStr(buf, e.getValue());
        }
        for (double l : losses) {
            buf.putDouble(l);
        }
        buf.putDouble(bestValLoss).putInt(bestStep);
        buf.putInt(a.length).put(a);
        buf.put((byte) (best == null ? 0 : 1));
        if (best != null) {
            buf.putInt(b.length).put(b);
        }
        for (float[][] m : moments) {
            for (float[] x : m) {
                buf.asFloatBuffer().put(x);
                buf.position(buf.position() + 4 * x.length);
            }
        }
        CRC32 crc = new CRC32();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        LoraFile.writeAtomically(path, buf.array(), buf.position());
    }

    /** Reads and checks a checkpoint; any damage is an {@link IOException} naming the file. */
    public static LoraCheckpoint read(Path path) throws IOException {
        byte[] bytes = Files.readAllBytes(path);
        try {
            return parse(bytes, path.toString());
        } catch (BufferUnderflowException | IndexOutOfBoundsException e) {
            throw new IOException(path + ": not a complete checkpoint (truncated after " + bytes.length + " bytes)");
        } catch (IllegalArgumentException e) {
            throw new IOException(path + ": " + e.getMessage());
        }
    }

    private static LoraCheckpoint parse(byte[] bytes, String what) throws IOException {
        if (bytes.length < MAGIC.length + 12) {
            throw new BufferUnderflowException();
        }
        if (!java.util.Arrays.equals(java.util.Arrays.copyOf(bytes, MAGIC.length), MAGIC)) {
            throw new IllegalArgumentException("not a LoRA training checkpoint (no JUNOCKPT magic)");
        }
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length - 4);
        if ((int) crc.getValue() != ByteBuffer.wrap(bytes, bytes.length - 4, 4).order(ByteOrder.LITTLE_ENDIAN).getInt()) {
            throw new IllegalArgumentException("checksum mismatch: the checkpoint is corrupt or truncated");
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes, 0, bytes.length - 4).order(ByteOrder.LITTLE_ENDIAN);
        buf.position(MAGIC.length);
        int version = buf.getInt();
        if (version != VERSION) {
            throw new IllegalArgumentException("checkpoint version " + version + " is not supported (this build reads " + VERSION + ")");
        }
        int steps = count(buf, 8);
        int nSettings = count(buf, 8);
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 0; i < nSettings; i++) {
            settings.put(str(buf), str(buf));
        }
        double[] losses = new double[steps];
        for (int i = 0; i < steps; i++) {
            losses[i] = buf.getDouble();
        }
        double bestVal = buf.getDouble();
        int bestStep = buf.getInt();
        LoraAdapter adapter = LoraFile.decode(bytes(buf), what + " (its adapter)");
        LoraAdapter best = buf.get() != 0 ? LoraFile.decode(bytes(buf), what + " (its best adapter)") : null;
        List<LoraPair> pairs = adapter.pairs();
        float[][][] moments = new float[pairs.size()][][];
        for (int i = 0; i < pairs.size(); i++) {
            LoraPair p = pairs.get(i);
            moments[i] = new float[][] {new float[p.a().length], new float[p.b().length], new float[p.a().length],
                    new float[p.b().length]};
            for (float[] x : moments[i]) {
                if (4L * x.length > buf.remaining()) {
                    throw new BufferUnderflowException();
                }
                buf.asFloatBuffer().get(x);
                buf.position(buf.position() + 4 * x.length);
            }
        }
        if (buf.hasRemaining()) {
            throw new IllegalArgumentException(buf.remaining() + " unexpected bytes after the optimizer state");
        }
        return new LoraCheckpoint(steps, settings, losses, bestVal, bestStep, adapter, best, moments);
    }

    private static int count(ByteBuffer b, int minBytesEach) {
        int n = b.getInt();
        if (n < 0 || (long) n * minBytesEach > b.remaining()) {
            throw new IllegalArgumentException("count " + Integer.toUnsignedString(n) + " exceeds the " + b.remaining() + " bytes left");
        }
        return n;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[count(b, 1)];
        b.get(out);
        return out;
    }

    private static String str(ByteBuffer b) {
        return new String(bytes(b), StandardCharsets.UTF_8);
    }

    private static void putStr(ByteBuffer buf, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        buf.putInt(b.length).put(b);
    }
}
