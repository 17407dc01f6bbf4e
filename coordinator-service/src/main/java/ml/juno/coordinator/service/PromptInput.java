package ml.juno.coordinator.service;

import java.util.List;
import java.util.Map;
import ml.juno.coordinator.tokenizer.ChatMessage;

/** What a request asks the model to continue: a chat, a text, or token ids. */
public sealed interface PromptInput {

    /**
     * A conversation, rendered with the model's chat template.
     *
     * @param tools tool descriptions (OpenAI shape) the template renders itself; empty for none
     */
    record Chat(List<ChatMessage> messages, List<Map<String, Object>> tools) implements PromptInput {
        public Chat {
            messages = List.copyOf(messages);
            tools = tools == null ? List.of() : List.copyOf(tools);
        }

        public Chat(List<ChatMessage> messages) {
            this(messages, List.of());
        }
    }

    /** Plain text, tokenized with the model's BOS rule. */
    record Text(String text) implements PromptInput {
    }

    /** Token ids as given. */
    record Tokens(int[] ids) implements PromptInput {
        public Tokens {
            ids = ids.clone();
        }
    }
}
