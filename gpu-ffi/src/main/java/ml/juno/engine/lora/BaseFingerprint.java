package ml.juno.engine.lora;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.ModelConfig;

/**
 * What a LoRA adapter was made for: the base model's architecture, name, shapes, whether Q/K/V and gate/up are fused
 * into one tensor each (phi3), and a hash of its tensor table (names and shapes, not block types: the same model in
 * another quantization keeps its fingerprint, so an adapter trained on Q4_K_M plays on F16). An adapter is refused on
 * a base with another fingerprint.
 */
public record BaseFingerprint(String architecture, String name, Shapes shapes, boolean fusedQkv, boolean fusedGateUp,
                              String tensorTable) {

    /** The shapes LoRA factors must fit: layers, embedding, heads, KV heads, head dimension, FFN width, vocabulary. */
    public record Shapes(int layers, int embedding, int heads, int kvHeads, int headDim, int ffn, int vocab) {
        public Shapes {
            if (layers <= 0 || embedding <= 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0 || ffn <= 0 || vocab <= 0) {
                throw new IllegalArgumentException("bad base shapes: " + layers + " layers, embedding " + embedding + ", "
                        + heads + "/" + kvHeads + " heads of " + headDim + ", ffn " + ffn + ", vocab " + vocab);
            }
        }

        public int qDim() {
            return heads * headDim;
        }

        public int kvDim() {
            return kvHeads * headDim;
        }
    }

    public BaseFingerprint {
        Objects.requireNonNull(architecture, "architecture");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(shapes, "shapes");
        Objects.requireNonNull(tensorTable, "tensorTable");
    }

    /** The fingerprint of the model in {@code file}. */
    public static BaseFingerprint of(GgufFile file) {
        String arch = file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE);
        ModelConfig c = Architectures.forName(arch).config(file);
        var a = c.attention();
        var d = c.dims();
        String name = file.metadata().getString(GgufKeys.GENERAL_NAME, file.path() == null ? "?" : file.path().getFileName().toString());
        boolean fusedQkv = file.findTensor(TensorNames.block(0, TensorNames.ATTN_QKV)).isPresent();
        boolean fusedGateUp = file.findTensor(TensorNames.block(0, TensorNames.FFN_GATE)).isEmpty()
                && file.findTensor(TensorNames.block(0, TensorNames.FFN_UP)).isPresent();
        return new BaseFingerprint(arch, name,
                new Shapes(d.layers(), d.embedding(), a.heads(), a.kvHeads(), a.headDim(), d.ffn(), d.vocab()),
                fusedQkv, fusedGateUp, tensorTableHash(file));
    }

    /** SHA-256 over the sorted {@code name shape} lines of the tensor table, first 16 hex digits. */
    static String tensorTableHash(GgufFile file) {
        List<GgufTensorInfo> ts = new ArrayList<>(file.tensors());
        ts.sort(Comparator.comparing(GgufTensorInfo::name));
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (GgufTensorInfo t : ts) {
                StringBuilder line = new StringBuilder(t.name());
                for (long n : t.shape()) {
                    line.append(' ').append(n);
                }
                md.update(line.append('\n').toString().getBytes(StandardCharsets.UTF_8));
            }
            return HexFormat.of().formatHex(md.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }

    /** Whether an adapter made for this base fits {@code other}: same architecture, shapes and tensor table. */
    public boolean matches(BaseFingerprint other) {
        return architecture.equals(other.architecture) && shapes.equals(other.shapes) && fusedQkv == other.fusedQkv
                && fusedGateUp == other.fusedGateUp && tensorTable.equals(other.tensorTable);
    }

    /** One line for messages: {@code 'stories260K' (llama, 5 layers, embedding 64, …, tensor table 1a2b…)}. */
    public String describe() {
        return "'" + name + "' (" + architecture + ", " + shapes.layers + " layers, embedding " + shapes.embedding + ", "
                + shapes.heads + "/" + shapes.kvHeads + " heads of " + shapes.headDim + ", ffn " + shapes.ffn
                + ", vocab " + shapes.vocab + ", tensor table " + tensorTable + ")";
    }
}
