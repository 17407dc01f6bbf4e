package ml.juno.engine.kv;

/** Element type of the KV cache. F16 halves the memory; F32 matches llama.cpp's references exactly. */
public enum KvType {
    F32(4),
    F16(2);

    public final int bytes;

    KvType(int bytes) {
        this.bytes = bytes;
    }
}
