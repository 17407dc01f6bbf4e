package ml.juno.engine.lora;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;
import ml.juno.engine.model.block.Projection;

/**
 * The {@code .lora} file, little-endian:
 * <pre>
 *   "JUNOLORA"                        8 bytes magic
 *   u32 format version                {@link LoraAdapter#FORMAT_VERSION}
 *   base: str architecture, str name, u32 layers, embedding, heads, kvHeads, headDim, ffn, vocab,
 *         u8 fused QKV, u8 fused gate-up, str tensor-table hash
 *   u32 rank, f32 alpha, u8 rsLoRA
 *   u32 targets, str each             (q, k, v, o, gate, up, down)
 *   u32 settings, (str key, str value) each
 *   u32 pairs, each: u32 layer, str target, u32 rank, u32 in, u32 out, f32 A[rank·in], f32 B[out·rank]
 *   u32 CRC-32 of every byte before it
 * </pre>
 * {@code str} is a u32 byte length and UTF-8. Written to a temporary file beside the target and renamed, so a crash
 * never leaves a half-written adapter under the final name. Reading checks every length against the bytes left, the
 * checksum, and the adapter against its header ({@link LoraAdapter}); any failure is an {@link IOException} naming the
 * file and what is wrong.
 */
public final class LoraFile {
    static final byte[] MAGIC = "JUNOLORA".getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_STRING = 1 << 16;

    private LoraFile() {}

    /** Whether {@code path} starts with the {@code .lora} magic. */
    public static boolean isLoraFile(Path path) throws IOException {
        try (var in = Files.newInputStream(path)) {
            return java.util.Arrays.equals(in.readNBytes(MAGIC.length), MAGIC);
        }
    }

    /** Writes {@code adapter} to {@code path} atomically (temp file + rename). */
    public static void write(Path path, LoraAdapter adapter) throws IOException {
        byte[] bytes = encode(adapter);
        writeAtomically(path, bytes, bytes.length);
    }

    /** The bytes of the {@code .lora} file of {@code adapter}. */
    static byte[] encode(LoraAdapter adapter) throws IOException {
        var h = adapter.header();
        var b = h.base();
        var s = b.shapes();
        long size = 1024;
        for (LoraPair p : adapter.pairs()) {
            size += 64 + 4L * ((long) p.rank() * p.in() + (long) p.out() * p.rank());
        }
        for (var e : h.training().entrySet()) {
            size += 8 + 3L * (e.getKey().length() + e.getValue().length());
        }
        size += 3L * (b.name().length() + b.architecture().length());
        if (size > Integer.MAX_VALUE - 64) {
            throw new IOException("LoRA adapter of " + size + " bytes is too large for one .lora file");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
        buf.put(MAGIC).putInt(h.formatVersion());
        putStr(buf, b.architecture());
        putStr(buf, b.name());
        buf.putInt(s.layers()).putInt(s.embedding()).putInt(s.heads()).putInt(s.kvHeads()).putInt(s.headDim())
                .putInt(s.ffn()).putInt(s.vocab());
        buf.put((byte) (b.fusedQkv() ? 1 : 0)).put((byte) (b.fusedGateUp() ? 1 : 0));
        putStr(buf, b.tensorTable());
        buf.putInt(h.rank()).putFloat(h.alpha()).put((byte) (h.rsLora() ? 1 : 0));
        buf.putInt(h.targets().size());
        for (Projection t : h.targets()) {
            putStr(buf, t.shortName);
        }
        buf.putInt(h.training().size());
        for (var e : h.training().entrySet()) {
            putStr(buf, e.getKey());
            putStr(buf, e.getValue());
        }
        buf.putInt(adapter.pairs().size());
        for (LoraPair p : adapter.pairs()) {
            buf.putInt(p.layer());
            putStr(buf, p.target().shortName);
            buf.putInt(p.rank()).putInt(p.in()).putInt(p.out());
            buf.asFloatBuffer().put(p.a());
            buf.position(buf.position() + 4 * p.a().length);
            buf.asFloatBuffer().put(p.b());
            buf.position(buf.position() + 4 * p.b().length);
        }
        CRC32 crc = new CRC32();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        return java.util.Arrays.copyOf(buf.array(), buf.position());
    }

    /** Writes {@code len} bytes of {@code data} to a temporary file beside {@code path}, then renames it. */
    static void writeAtomically(Path path, byte[] data, int len) throws IOException {
        AtomicWrite.to(path, tmp -> {
            try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
                ByteBuffer w = ByteBuffer.wrap(data, 0, len);
                while (w.hasRemaining()) {
                    ch.write(w);
                }
                ch.force(true);
            }
        });
    }

    private static void putStr(ByteBuffer buf, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        buf.putInt(b.length).put(b);
    }

    /** Reads and validates the adapter in {@code path}. */
    public static LoraAdapter read(Path path) throws IOException {
        long fileSize = Files.size(path);
        if (fileSize > Integer.MAX_VALUE) {
            throw new IOException(path + ": " + fileSize + " bytes is too large for a .lora file");
        }
        return decode(Files.readAllBytes(path), path.toString());
    }

    /** The adapter of {@code .lora} bytes; errors name {@code what}. */
    static LoraAdapter decode(byte[] bytes, String what) throws IOException {
        try {
            return parse(bytes);
        } catch (BufferUnderflowException e) {
            throw new IOException(what + ": not a complete .lora file (truncated after " + bytes.length + " bytes)");
        } catch (IllegalArgumentException e) {
            throw new IOException(what + ": " + e.getMessage());
        }
    }

    private static LoraAdapter parse(byte[] bytes) {
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        byte[] magic = new byte[MAGIC.length];
        if (bytes.length < MAGIC.length) {
            throw new BufferUnderflowException();
        }
        buf.get(magic);
        if (!java.util.Arrays.equals(magic, MAGIC)) {
            throw new IllegalArgumentException("not a .lora file (no JUNOLORA magic)");
        }
        int version = buf.getInt();
        if (version != LoraAdapter.FORMAT_VERSION) {
            throw new IllegalArgumentException(".lora format version " + version + " is not supported (this build reads version "
                    + LoraAdapter.FORMAT_VERSION + ")");
        }
        if (bytes.length < MAGIC.length + 8) {
            throw new BufferUnderflowException();
        }
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length - 4);
        int stored = ByteBuffer.wrap(bytes, bytes.length - 4, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
        ByteBuffer body = ByteBuffer.wrap(bytes, 0, bytes.length - 4).order(ByteOrder.LITTLE_ENDIAN);
        body.position(buf.position());
        if ((int) crc.getValue() != stored) {
            throw new IllegalArgumentException("checksum mismatch: the file is corrupt or truncated");
        }
        String arch = str(body, "architecture");
        String name = str(body, "base name");
        var shapes = new BaseFingerprint.Shapes(body.getInt(), body.getInt(), body.getInt(), body.getInt(), body.getInt(),
                body.getInt(), body.getInt());
        boolean fusedQkv = body.get() != 0;
        boolean fusedGateUp = body.get() != 0;
        String table = str(body, "tensor-table hash");
        int rank = body.getInt();
        float alpha = body.getFloat();
        boolean rs = body.get() != 0;
        int nTargets = count(body, "targets", 1);
        Set<Projection> targets = EnumSet.noneOf(Projection.class);
        for (int i = 0; i < nTargets; i++) {
            targets.add(Projection.parse(str(body, "target")));
        }
        int nSettings = count(body, "training settings", 8);
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 0; i < nSettings; i++) {
            settings.put(str(body, "setting key"), str(body, "setting value"));
        }
        var header = new LoraAdapter.Header(version, new BaseFingerprint(arch, name, shapes, fusedQkv, fusedGateUp, table),
                targets, rank, alpha, rs, settings);
        int nPairs = count(body, "pairs", 20);
        List<LoraPair> pairs = new ArrayList<>(nPairs);
        for (int i = 0; i < nPairs; i++) {
            int layer = body.getInt();
            Projection t = Projection.parse(str(body, "pair target"));
            int r = body.getInt();
            int in = body.getInt();
            int out = body.getInt();
            if (r <= 0 || in <= 0 || out <= 0) {
                throw new IllegalArgumentException("pair " + i + " (layer " + layer + " " + t.shortName + ") has rank " + r
                        + ", in " + in + ", out " + out + ": all must be positive");
            }
            long floats = (long) r * in + (long) out * r;
            if (floats * 4 > body.remaining()) {
                throw new BufferUnderflowException();
            }
            float[] a = new float[r * in];
            float[] b = new float[out * r];
            body.asFloatBuffer().get(a);
            body.position(body.position() + 4 * a.length);
            body.asFloatBuffer().get(b);
            body.position(body.position() + 4 * b.length);
            pairs.add(new LoraPair(layer, t, r, in, out, a, b));
        }
        if (body.hasRemaining()) {
            throw new IllegalArgumentException(body.remaining() + " unexpected bytes after the last pair");
        }
        return new LoraAdapter(header, pairs);
    }

    private static int count(ByteBuffer b, String what, int minBytesEach) {
        int n = b.getInt();
        if (n < 0 || (long) n * minBytesEach > b.remaining()) {
            throw new IllegalArgumentException("count of " + what + " " + Integer.toUnsignedString(n) + " exceeds the "
                    + b.remaining() + " bytes left");
        }
        return n;
    }

    private static String str(ByteBuffer b, String what) {
        int n = b.getInt();
        if (n < 0 || n > MAX_STRING || n > b.remaining()) {
            throw new IllegalArgumentException(what + " length " + Integer.toUnsignedString(n) + " exceeds the "
                    + b.remaining() + " bytes left");
        }
        byte[] s = new byte[n];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }
}
