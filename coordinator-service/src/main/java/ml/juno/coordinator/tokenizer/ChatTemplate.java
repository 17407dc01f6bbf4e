package ml.juno.coordinator.tokenizer;

import java.util.List;

/**
 * Turns a conversation into the prompt text a model was trained on. The model's own Jinja template
 * ({@link JinjaChatTemplate}) when the file has one, otherwise a built-in ({@link BuiltinChatTemplate})
 * chosen from metadata by {@link ChatTemplates#forModel}.
 */
public interface ChatTemplate {
    /** Short name for logs ("jinja", "chatml", "llama2", …). */
    String name();

    /**
     * Renders the conversation.
     *
     * @throws ChatTemplateException when the template cannot render it (for instance it calls
     *     {@code raise_exception} on an unsupported role order)
     */
    String render(ChatRequest request);

    /** Text that ends an assistant turn, for use as stop strings (e.g. {@code <|im_end|>}). */
    List<String> stopStrings();
}
