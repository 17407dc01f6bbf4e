package ml.juno.cli;

import ml.juno.engine.kv.KvType;

/** The {@code --cache-type} values (llama.cpp's names). */
final class CacheTypes {
    private CacheTypes() {}

    static KvType parse(String name) {
        return switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "f32" -> KvType.F32;
            case "f16" -> KvType.F16;
            default -> throw new CliException("unknown --cache-type '" + name + "' (use f32 or f16)");
        };
    }
}
