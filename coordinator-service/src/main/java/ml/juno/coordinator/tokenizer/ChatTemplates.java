package ml.juno.coordinator.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;

/**
 * Chooses the chat template of a model from its metadata — never from its file name: the embedded
 * {@code tokenizer.chat_template} when present, otherwise a built-in picked by
 * {@code general.architecture} and the vocabulary's own marker tokens.
 */
public final class ChatTemplates {
    private ChatTemplates() {
    }

    /** The template for a model file's metadata and its tokenizer. */
    public static ChatTemplate forModel(GgufMetadata md, Tokenizer tok) {
        String bos = tok.bos() >= 0 ? tok.tokenText(tok.bos()) : "";
        String eos = tok.eos() >= 0 ? tok.tokenText(tok.eos()) : "";
        String source = md.getString(GgufKeys.TOKENIZER_CHAT_TEMPLATE, "");
        if (!source.isBlank()) {
            List<String> stops = new ArrayList<>();
            for (int id : tok.endOfGenerationIds()) {
                stops.add(tok.tokenText(id));
            }
            return new JinjaChatTemplate(source, bos, eos, stops);
        }
        return builtinFor(md.getString(GgufKeys.GENERAL_ARCHITECTURE, ""), md.getString(GgufKeys.GENERAL_NAME, ""), tok)
                .bind(bos, eos);
    }

    /** The built-in format for an architecture, refined by the vocabulary's marker tokens and model name. */
    public static BuiltinChatTemplate builtinFor(String architecture, String modelName, Tokenizer tok) {
        String name = modelName.toLowerCase(Locale.ROOT);
        return switch (architecture) {
            case "llama" -> {
                if (tok.tokenId("<|start_header_id|>") >= 0) {
                    yield BuiltinChatTemplate.LLAMA3;
                }
                if (tok.tokenId("<|im_start|>") >= 0) {
                    yield BuiltinChatTemplate.CHATML;
                }
                if (tok.tokenId("[INST]") >= 0 || name.contains("mistral")) {
                    yield BuiltinChatTemplate.MISTRAL;
                }
                if (name.contains("zephyr")) {
                    yield BuiltinChatTemplate.ZEPHYR;
                }
                yield BuiltinChatTemplate.LLAMA2;
            }
            case "mistral", "mistral3" -> BuiltinChatTemplate.MISTRAL;
            case "qwen", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "qwen2vl" -> BuiltinChatTemplate.CHATML;
            case "phi3", "phimoe" -> BuiltinChatTemplate.PHI3;
            case "gemma", "gemma2", "gemma3", "gemma3n" -> BuiltinChatTemplate.GEMMA;
            default -> BuiltinChatTemplate.CHATML; // llama.cpp's fallback as well
        };
    }

    /**
     * Tokenizes a rendered prompt: special-token text is parsed, and BOS is added only when the
     * template did not already write it, so the prompt never starts with two BOS tokens.
     */
    public static int[] encodePrompt(Tokenizer tok, String rendered) {
        boolean hasBos = tok.bos() >= 0 && rendered.startsWith(tok.tokenText(tok.bos()));
        return tok.encode(rendered, !hasBos, true);
    }
}
